import { createInterface } from "node:readline";

/**
 * A stand-in for `local-ai serve-stdio` in the client's unit tests: reads v1 request lines and
 * answers from a script, so the client's logic (ids, events, errors, cancel, exits) is tested
 * without a model. Speaks exactly the v1 wire (including the `pull`/`unload` wire the real server
 * implements). Writes a pino-like log line and a plain line on stderr at start.
 *
 * Methods: initialize, ping, pull (`ref: "slow"` waits for cancel), unload, cancel,
 * chat (`input: "flood:N"` streams N one-character deltas before the result; `input: "wait"`
 * waits for cancel), crash (stderr "boom", exit 3), shutdown.
 * SCRIPTED_INIT=fail answers initialize with an error; SCRIPTED_EXIT_AT_START=1 exits at once.
 */
if (process.env.SCRIPTED_EXIT_AT_START === "1") {
  process.stderr.write("cannot start: scripted\n");
  process.exit(2);
}

const write = (message: object): void => void process.stdout.write(`${JSON.stringify(message)}\n`);
const waiting = new Map<string | number, () => void>();

process.stderr.write(`${JSON.stringify({ level: 30, time: Date.now(), pid: process.pid, msg: "scripted local-ai ready" })}\n`);
process.stderr.write("a line that is not JSON\n");

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const request = JSON.parse(line) as { id: string | number; method: string; params?: Record<string, unknown> };
  const { id, method } = request;
  const params = request.params ?? {};
  switch (method) {
    case "initialize":
      if (process.env.SCRIPTED_INIT === "fail") return write({ id, type: "error", code: "invalid_request", message: "No common protocol version", details: { supported: [2] } });
      return write({ id, type: "result", result: { protocol_version: 1, capabilities: { parallel_chat: true, targeted_cancel: true, methods: ["initialize", "ping", "chat", "cancel", "pull", "unload"], max_line_bytes: 8388608, wire: "v1" }, server: { name: "local-ai", version: "0.0.0-scripted" } } });
    case "ping":
      return write({ id, type: "result", result: { status: "ok" } });
    case "pull": {
      const total = 456;
      write({ id, type: "event", event: "pull_progress", downloaded_bytes: 0, total_bytes: total });
      write({ id, type: "event", event: "pull_progress", downloaded_bytes: 123, total_bytes: total });
      if (params.ref === "slow") {
        waiting.set(id, () => write({ id, type: "error", code: "cancelled", message: "Request cancelled" }));
        return;
      }
      write({ id, type: "event", event: "pull_progress", downloaded_bytes: total, total_bytes: total });
      return write({ id, type: "result", result: { path: `/models/${String(params.ref)}.gguf`, bytes: total } });
    }
    case "unload":
      return write({ id, type: "result", result: { unloaded: typeof params.model === "string" ? [params.model] : ["default", "tiny"] } });
    case "cancel": {
      const target = params.request_id as string | number;
      const stop = waiting.get(target);
      if (stop === undefined) return write({ id, type: "error", code: "invalid_request", message: `No active request ${JSON.stringify(target)}` });
      waiting.delete(target);
      write({ id, type: "result", result: { status: "ok" } });
      return stop();
    }
    case "chat": {
      const input = String(params.input);
      write({ id, type: "event", event: "run_start", user_input: input, trace_id: "0123456789abcdef", session_id: "s", agent: "assistant" });
      write({ id, type: "event", event: "llm_start", step: 0 });
      if (input === "wait") {
        write({ id, type: "event", event: "llm_chunk", step: 0, delta: "..." });
        waiting.set(id, () => write({ id, type: "error", code: "cancelled", message: "Request cancelled" }));
        return;
      }
      const count = input.startsWith("flood:") ? Number(input.slice(6)) : 1;
      let text = "";
      for (let i = 0; i < count; i++) {
        const delta = String.fromCharCode(97 + (i % 26));
        text += delta;
        write({ id, type: "event", event: "llm_chunk", step: 0, delta });
      }
      write({ id, type: "event", event: "llm_done", step: 0 });
      write({ id, type: "event", event: "final", step: 0, response: text });
      return write({ id, type: "result", result: { response: text, session_id: "s", trace_id: "0123456789abcdef", warnings: [] } });
    }
    case "crash":
      process.stderr.write("boom\n");
      return process.exit(3);
    case "shutdown":
      write({ id, type: "result", result: { status: "ok" } });
      return process.exit(0);
    default:
      return write({ id, type: "error", code: "unknown_method", message: `Unknown method "${method}"` });
  }
});
// stdin EOF: exit like the real server (after answering what was read).
lines.on("close", () => process.exit(0));
