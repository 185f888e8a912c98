// The core that codex-scenario.ts and claude-code-scenario.ts share: a real coding client run
// against the built CLI's serve-http, everything inside one loopback-only network namespace
// (`unshare --net`, the wrapper from loopback-netns.ts; the
// scripted OpenAI upstream when the scenario has one, serve-http, a recording proxy in front of
// it, and the client). The test process cannot reach into the namespace, so the scenario file runs
// itself as a script in a child and reports back through a JSON file.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startHttpServer, type HttpServer } from "./http-server.js";
import { inLoopbackNetns, networkInterfaces } from "./loopback-netns.js";
import { startAgentUpstream, type AgentUpstream, type UpstreamStep } from "./openai-agent-upstream.js";
import { startRecordingProxy, type Exchange, type RecordingProxy } from "./recording-proxy.js";

/** Replaced in `serverYaml` by the scripted upstream's base URL (http://127.0.0.1:<port>/v1). */
export const UPSTREAM_URL_PLACEHOLDER = "__UPSTREAM_BASE_URL__";

export interface ServedScenario {
  /** serve-http's config.yaml (see UPSTREAM_URL_PLACEHOLDER). */
  serverYaml: string;
  /** Starts the scripted OpenAI-compatible upstream with these steps (openai-agent-upstream.ts). */
  upstreamSteps?: UpstreamStep[];
}

export interface ServedRun<T> {
  /** The network interfaces inside the namespace (["lo"]). */
  interfaces: string[];
  client: T;
  /** Client <-> serve-http, as the proxy saw them. */
  exchanges: Exchange[];
  /** The upstream's chat completion request bodies, in order. */
  upstreamChats: unknown[];
  serverStderr: string;
}

/**
 * Runs `script` (a compiled scenario file that calls runScenarioScript) in a fresh loopback-only
 * namespace with `spec`, and resolves with its report (check loopbackNetnsUnavailable() first).
 */
export async function runScenarioInNetns<R>(script: string, spec: unknown, name: string, timeoutMs: number): Promise<R> {
  const dir = await mkdtemp(path.join(tmpdir(), `${name.replaceAll(" ", "-")}-`));
  try {
    const specPath = path.join(dir, "spec.json");
    const reportPath = path.join(dir, "report.json");
    await writeFile(specPath, JSON.stringify(spec));
    const wrapped = inLoopbackNetns(process.execPath, [script, specPath, reportPath]);
    // Its own process group: a hang is ended by killing the group, serve-http and the client included.
    const child = spawn(wrapped.file, wrapped.args, { stdio: ["ignore", "ignore", "pipe"], detached: true });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    }, timeoutMs);
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (exitCode) => resolve(exitCode));
    }).finally(() => clearTimeout(timer));
    const report = await readFile(reportPath, "utf8").catch(() => null);
    if (code !== 0 || report === null) throw new Error(`${name} failed (exit ${String(code)}): ${stderr}`);
    return JSON.parse(report) as R;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** When `script` is the process's main module (argv: <spec> <report>), runs `main` and writes its report. */
export function runScenarioScript<S>(script: string, main: (spec: S) => Promise<unknown>): void {
  if (process.argv[1] !== script) return;
  const [specPath, reportPath] = process.argv.slice(2);
  void (async () => {
    const spec = JSON.parse(await readFile(specPath ?? "", "utf8")) as S;
    await writeFile(reportPath ?? "", JSON.stringify(await main(spec)));
  })().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}

/** Upstream (if any), serve-http and the recording proxy up; `client` run against the proxy's base URL; all closed after. */
export async function withServedClient<T>(spec: ServedScenario, token: string, client: (proxyBase: string) => Promise<T>): Promise<ServedRun<T>> {
  let upstream: AgentUpstream | undefined;
  let server: HttpServer | undefined;
  let proxy: RecordingProxy | undefined;
  try {
    upstream = spec.upstreamSteps === undefined ? undefined : await startAgentUpstream(spec.upstreamSteps);
    const yaml = spec.serverYaml.replaceAll(UPSTREAM_URL_PLACEHOLDER, upstream?.baseUrl ?? UPSTREAM_URL_PLACEHOLDER);
    server = await startHttpServer({ yaml, token });
    proxy = await startRecordingProxy(server.port);
    const result = await client(proxy.base);
    return {
      interfaces: networkInterfaces(),
      client: result,
      exchanges: proxy.exchanges,
      upstreamChats: upstream?.chats().map((request) => request.body) ?? [],
      serverStderr: server.stderr(),
    };
  } finally {
    await proxy?.close();
    await server?.stop();
    await upstream?.close();
  }
}
