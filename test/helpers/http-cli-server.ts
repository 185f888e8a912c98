import { CliProcess } from "./cli-process.js";
import { tempConfig } from "./temp-config.js";
import { freePort } from "./free-port.js";

export { freePort };

export { agentsYaml } from "./agents-yaml.js";

export interface HttpServer {
  proc: CliProcess;
  port: number;
  base: string;
  dir: string;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The built CLI's serve-http on a free port with the given config body; resolves once /health is 200. `prepare` runs before the start. */
export async function startHttpServer(yaml: string, extraArgs: string[] = [], env: Record<string, string> = {}, prepare?: (dir: string) => Promise<void>): Promise<HttpServer> {
  const { dir, configPath } = await tempConfig(yaml);
  // Files the server must find at its start (an old data dir), written in the config's folder.
  await prepare?.(dir);
  const port = await freePort();
  const proc = new CliProcess(["serve-http", "--config", configPath, "--port", String(port), ...extraArgs], { cwd: dir, env });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    // A readiness poll, paced at 100 ms: /health is the only readiness signal at the tests' warn
    // log level (and an early exit ends the wait at once).
    const exited = await Promise.race([proc.exited.then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), 100))]);
    if (exited) throw new Error(`serve-http exited early: ${proc.stderr}`);
    const status = await fetch(`${base}/health`).then((r) => r.status, () => 0);
    if (status === 200) break;
    if (Date.now() > deadline) throw new Error(`serve-http not ready (last /health ${status}): ${proc.stderr}`);
  }
  return {
    proc,
    port,
    base,
    dir,
    stop: async () => {
      proc.child.kill("SIGTERM");
      return proc.exited;
    },
  };
}
