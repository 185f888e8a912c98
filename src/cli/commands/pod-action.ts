import path from "node:path";
import { connect, type Socket } from "node:net";
import { createInterface } from "node:readline";
import type { Command } from "commander";
import { loadConfig } from "../../config/load-config.js";
import { handshakeOnPosix, podEndpoint, type PodEndpoint } from "../../pod/pod-endpoint.js";
import { handshakeLine, readPodToken } from "../../pod/pod-token.js";
import { LineSplitter } from "../../shared/line-splitter.js";
import type { CliDeps } from "../cli-deps.js";
import { PodEventPrinter, type WirePodEvent } from "../pod-event-printer.js";

export interface PodOptions {
  config?: string;
  socket?: string;
  run?: string;
}

/** History replies can be long; a line beyond this is reported and skipped. */
const MAX_EVENT_LINE_BYTES = 64 * 1024 * 1024;
const METHOD_WORDS: Record<string, string> = { resume: "resume", cancel: "cancel", status: "get_status", get_status: "get_status", history: "get_history", get_history: "get_history" };

/** The `pod` action, imported only when this command runs (see program.ts: lazy commands). */
export async function runPodCommand(command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<PodOptions>();
  const endpoint = await podEndpointOf(options, deps);
  const socketPath = endpoint.path;
  // Windows: the pipe admits only a client that sends the token first (pod-endpoint.ts).
  const token = endpoint.tokenFile === null ? null : await readPodToken(endpoint.tokenFile);
  if (endpoint.tokenFile !== null && token === null) {
    deps.stderr.write(`local-ai pod: no pod token in ${endpoint.tokenFile} (is \`local-ai serve-socket\` running on this data dir?)\n`);
    deps.setExitCode(1);
    return;
  }
  const socket = await new Promise<Socket | Error>((resolve) => {
    const candidate = connect(socketPath);
    candidate.once("connect", () => resolve(candidate));
    candidate.once("error", resolve);
  });
  if (socket instanceof Error) {
    deps.stderr.write(`local-ai pod: cannot connect to ${socketPath}: ${(socket as NodeJS.ErrnoException).code ?? socket.message} (is \`local-ai serve-socket\` running?)\n`);
    deps.setExitCode(1);
    return;
  }
  if (token !== null) socket.write(handshakeLine(token));
  const code = await session(socket, options.run, deps);
  deps.setExitCode(code);
}

async function podEndpointOf(options: PodOptions, deps: CliDeps): Promise<PodEndpoint> {
  const os = process.platform;
  // A --socket on POSIX needs no config (no token); otherwise data_dir comes from the config.
  let dataDir = path.resolve(deps.cwd, ".local-ai");
  if (options.socket === undefined || os === "win32" || handshakeOnPosix(deps.env)) {
    const state = await loadConfig({ flag: options.config, env: deps.env, cwd: deps.cwd });
    if (state.status === "loaded") dataDir = state.config.app.data_dir;
  }
  return podEndpoint({ dataDir, socket: options.socket, cwd: deps.cwd, os, handshakeOnPosix: handshakeOnPosix(deps.env) });
}

function session(socket: Socket, runText: string | undefined, deps: CliDeps): Promise<number> {
  const printer = new PodEventPrinter(deps.stdout);
  const splitter = new LineSplitter(MAX_EVENT_LINE_BYTES);
  const send = (method: string, params?: Record<string, unknown>): void => {
    socket.write(`${JSON.stringify(params === undefined ? { method } : { method, params })}\n`);
  };
  return new Promise<number>((resolve) => {
    let outcome: number | null = null;
    const finish = (code: number): void => {
      outcome ??= code;
      socket.end();
    };
    // --run: our turn is the first turn_start after our `run`; its turn_end decides the exit code.
    let ourTurn: unknown = null;
    const onEvent = (message: WirePodEvent): void => {
      printer.print(message);
      if (runText === undefined) return;
      if (message.event === "turn_start" && ourTurn === null) ourTurn = message.data.turn;
      else if (message.event === "error" && ourTurn === null) finish(1);
      else if (message.event === "turn_end" && message.data.turn === ourTurn) finish(message.data.result === "paused" ? 3 : message.data.reason === undefined ? 0 : 1);
    };
    socket.on("data", (chunk: Buffer) => {
      for (const line of splitter.push(chunk)) {
        if (line.kind === "overflow") {
          deps.stderr.write(`local-ai pod: skipped an event line of ${line.bytes} bytes\n`);
          continue;
        }
        try {
          onEvent(JSON.parse(line.text) as WirePodEvent);
        } catch {
          deps.stderr.write(`local-ai pod: not an event: ${line.text.slice(0, 200)}\n`);
        }
      }
    });
    socket.on("error", (error) => deps.stderr.write(`local-ai pod: ${error.message}\n`));
    let input: ReturnType<typeof createInterface> | null = null;
    socket.on("close", () => {
      // Reading stdin would keep the process up after the pod is gone.
      input?.close();
      if (input !== null) deps.io.stdin.destroy();
      // The pod went away before our turn ended: that is not a finished turn.
      resolve(outcome ?? (runText === undefined ? 0 : 1));
    });
    if (runText !== undefined) {
      send("run", { input: runText });
      return;
    }
    send("get_status");
    input = createInterface({ input: deps.io.stdin, terminal: false });
    input.on("line", (raw) => {
      const line = raw.trim();
      if (line === "") return;
      if (line === "quit" || line === "exit") return void input?.close();
      if (line.startsWith("{")) return void socket.write(`${line}\n`);
      const method = METHOD_WORDS[line];
      if (method !== undefined) return send(method);
      send("run", { input: line.startsWith("run ") ? line.slice(4) : line });
    });
    input.on("close", () => finish(0));
  });
}
