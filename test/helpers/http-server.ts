import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { tempConfig } from "./temp-config.js";
import { freePort } from "./free-port.js";

export { freePort };

/**
 * `local-ai serve-http` as a child process on a free port, ready when `GET /health` answers 200,
 * for the client and load tests and bench:http (http-cli-server.ts is the helper of the http-openai,
 * startup and SSE-event tests). No node:test import here, so benches can use it too
 * (cli-process.ts registers an `after` hook); live servers are killed when this process exits.
 */

/** The built CLI (the same path as cli-process.ts). */
const CLI_PATH = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

const live = new Set<ChildProcessWithoutNullStreams>();
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

export interface HttpServerOptions {
  /** Config text after the `app:` section (which sets data_dir to ./data in a fresh temp folder). */
  yaml: string;
  /** Passed as --bearer-token. */
  token?: string;
  env?: Record<string, string | undefined>;
  /** How long to wait for /health 200 (default 60 s). */
  readyTimeoutMs?: number;
  /** Extra node flags for the CLI (e.g. --cpu-prof). */
  nodeArgs?: readonly string[];
}

export interface HttpServer {
  /** http://127.0.0.1:PORT (no trailing slash, no /v1). */
  baseURL: string;
  port: number;
  dir: string;
  configPath: string;
  proc: ChildProcessWithoutNullStreams;
  stderr(): string;
  /** SIGTERM, then resolves on exit; rejects unless the exit code is 0 (SIGKILL after timeoutMs). */
  stop(timeoutMs?: number): Promise<void>;
}

/** `llama:` and `agents:` sections: `assistant` on the demo model (greedy, exact sentence), `talker` on the tiny model (never stops by itself). */
export function demoAndTinyYaml(paths: { demoPath: string; tinyPath?: string; talkerMaxTokens?: number }): string {
  const lines = ["llama:", "  models:", "    default:", `      path: ${JSON.stringify(paths.demoPath)}`, "      threads: 1", "      ctx_size: 2048"];
  if (paths.tinyPath) lines.push("    tiny:", `      path: ${JSON.stringify(paths.tinyPath)}`, "      threads: 1", "      ctx_size: 4096");
  lines.push("agents:", "  assistant:", "    temperature: 0");
  if (paths.tinyPath) lines.push("  talker:", "    model: tiny", "    temperature: 0", `    max_tokens: ${paths.talkerMaxTokens ?? 3000}`);
  lines.push("");
  return lines.join("\n");
}

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const { dir, configPath } = await tempConfig(options.yaml);
  const port = await freePort();
  const args = ["serve-http", "--config", configPath, "--host", "127.0.0.1", "--port", String(port)];
  if (options.token !== undefined) args.push("--bearer-token", options.token);
  const proc = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI_PATH, ...args], {
    cwd: dir,
    env: { ...process.env, LOCAL_AI_LOG_LEVEL: "warn", ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  live.add(proc);
  let stderr = "";
  proc.stdout.resume();
  proc.stderr.setEncoding("utf8");
  proc.stderr.on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-16_000)));
  proc.stdin.on("error", () => undefined);
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on("exit", (code, signal) => {
      live.delete(proc);
      exit = { code, signal };
      resolve(exit);
    }),
  );
  const baseURL = `http://127.0.0.1:${port}`;
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const deadline = Date.now() + readyTimeoutMs;
  let last = "no answer yet";
  for (;;) {
    if (exit) throw new Error(`serve-http exited before ready (${JSON.stringify(exit)}); stderr tail:\n${stderr.slice(-3000)}`);
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`serve-http not ready on ${baseURL} after ${readyTimeoutMs} ms (last: ${last}); stderr tail:\n${stderr.slice(-3000)}`);
    }
    try {
      const response = await fetch(`${baseURL}/health`, { signal: AbortSignal.timeout(2000) });
      last = `${response.status} ${(await response.text()).slice(0, 300)}`;
      if (response.status === 200) break;
    } catch (error) {
      last = String(error);
    }
    // Paces a readiness poll: /health is the only readiness signal at the tests' warn log level.
    await sleep(100);
  }

  return {
    baseURL,
    port,
    dir,
    configPath,
    proc,
    stderr: () => stderr,
    async stop(timeoutMs = 15_000) {
      if (!exit) proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
      const result = await exited;
      clearTimeout(timer);
      if (result.code !== 0) throw new Error(`serve-http exited with ${JSON.stringify(result)} after SIGTERM; stderr tail:\n${stderr.slice(-3000)}`);
    },
  };
}

export interface SseFrame {
  event: string | null;
  data: string;
}

/** Splits an SSE body into frames (`event:` and joined `data:` lines); comments and ids are ignored. */
export function parseSse(text: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const block of text.replace(/\r\n?/g, "\n").split("\n\n")) {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (event !== null || data.length > 0) frames.push({ event, data: data.join("\n") });
  }
  return frames;
}

export interface ChunkLike {
  object?: string;
  choices?: Array<{ delta?: { content?: string | null }; finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/** The text of a strictly standard stream; throws on a named event, a non-chunk frame, or a missing `[DONE]`. */
export function assembleStandardStream(text: string): { content: string; chunks: ChunkLike[]; finishReasons: string[] } {
  const frames = parseSse(text);
  const last = frames.at(-1);
  if (!last || last.data !== "[DONE]") throw new Error(`stream does not end with data: [DONE]: ${text.slice(-500)}`);
  const chunks: ChunkLike[] = [];
  for (const frame of frames.slice(0, -1)) {
    if (frame.event !== null) throw new Error(`named SSE event in the default stream: ${frame.event}`);
    const chunk = JSON.parse(frame.data) as ChunkLike;
    if (chunk.object !== "chat.completion.chunk") throw new Error(`not a chat.completion.chunk: ${frame.data.slice(0, 300)}`);
    chunks.push(chunk);
  }
  const content = chunks.map((c) => c.choices?.[0]?.delta?.content ?? "").join("");
  const finishReasons = chunks.flatMap((c) => (c.choices ?? []).map((choice) => choice.finish_reason).filter((r): r is string => typeof r === "string"));
  return { content, chunks, finishReasons };
}
