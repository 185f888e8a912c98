// Starts a real llama-server for the openai engine's end-to-end tests: its own process group
// (so one signal stops it and anything it spawned), readiness by polling GET /health (503 while
// the model loads), and its stderr kept in memory so tests can see what the server observed
// (e.g. "cancel task" when our client hangs up mid-stream).
import { execa, type ResultPromise } from "execa";
import { freePort } from "./free-port.js";

export interface LlamaServerHandle {
  port: number;
  /** `http://127.0.0.1:<port>/v1`, what the openai engine's base_url is set to. */
  baseUrl: string;
  /** Every stderr line so far (llama-server logs there). */
  logLines: () => string[];
  /** Resolves with the first log line (after `fromLine`) matching `pattern`, or null after `timeoutMs`. */
  waitForLog: (pattern: RegExp, timeoutMs: number, fromLine?: number) => Promise<string | null>;
  stop: () => Promise<void>;
}

export interface StartLlamaServerOptions {
  binary: string;
  model: string;
  /** Appended after the common arguments (e.g. ["--api-key", "secret"]). */
  extraArgs?: string[];
  ctxSize?: number;
  readyTimeoutMs?: number;
}

const running = new Set<number>();
// Last resort if the test process dies without running `after`: never leave a server behind.
process.once("exit", () => {
  for (const pid of running) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function startLlamaServer(options: StartLlamaServerOptions): Promise<LlamaServerHandle> {
  const port = await freePort();
  const args = [
    "-m", options.model,
    "--host", "127.0.0.1",
    "--port", String(port),
    "-c", String(options.ctxSize ?? 2048),
    "-t", "1",
    "--jinja",
    "-np", "2",
    ...(options.extraArgs ?? []),
  ];
  const child: ResultPromise = execa(options.binary, args, {
    detached: true,
    cleanup: false, // detached: we stop the whole group ourselves
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
    buffer: false,
    reject: false,
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`llama-server did not start (${options.binary})`);
  running.add(pid);

  const lines: string[] = [];
  let partial = "";
  child.stderr?.on("data", (data: Buffer) => {
    const text = partial + data.toString("utf8");
    const parts = text.split("\n");
    partial = parts.pop() ?? "";
    // Kept whole (a test-length run logs little), so line indexes stay valid for waitForLog.
    lines.push(...parts);
  });
  let exited = false;
  const exit = child.then(() => {
    exited = true;
    running.delete(pid);
  });

  const stop = async (): Promise<void> => {
    if (!exited) {
      try {
        process.kill(-pid, "SIGTERM");
      } catch {
        // already gone
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // already gone
        }
      }, 3000);
      await exit;
      clearTimeout(timer);
    }
  };

  // Readiness: /health is 503 while loading, 200 once the model serves.
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (exited) {
      throw new Error(`llama-server exited before it was ready:\n${lines.slice(-20).join("\n")}`);
    }
    const status = await fetch(`http://127.0.0.1:${port}/health`).then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`llama-server not ready after ${options.readyTimeoutMs ?? 30_000} ms:\n${lines.slice(-20).join("\n")}`);
    }
    // Paces a readiness poll: llama-server's /health (503 while loading) is its readiness signal.
    await sleep(50);
  }

  return {
    port,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    logLines: () => [...lines],
    waitForLog: async (pattern, timeoutMs, fromLine = 0) => {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const hit = lines.slice(fromLine).find((line) => pattern.test(line));
        if (hit !== undefined) return hit;
        if (Date.now() > until) return null;
        await sleep(20);
      }
    },
    stop,
  };
}
