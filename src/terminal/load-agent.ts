import type { SessionRunner } from "../agent/session-runner.js";
import { toRuntimeError } from "../shared/runtime-error.js";
import type { LineWriter } from "./line-writer.js";
import { LoadProgressBar } from "./load-progress-bar.js";
import type { TerminalStyle } from "./terminal-style.js";

export type AgentLoad = "ready" | "failed" | "cancelled";

/**
 * The chat's warm-up of an agent: its model loaded (downloaded first when it must be) and its
 * tool servers started, with a progress bar; a failure or a cancel is one line. `signal` is the
 * chat's Ctrl-C.
 */
export async function loadAgent(
  chat: { runner: Pick<SessionRunner, "warmUp">; ui: LineWriter; style: TerminalStyle },
  agent: string,
  model: string,
  signal: AbortSignal,
): Promise<AgentLoad> {
  const { runner, ui, style } = chat;
  const bar = new LoadProgressBar(ui, style, model);
  bar.start();
  try {
    await runner.warmUp(agent, signal, (progress) => bar.update(progress));
    bar.finish("ready");
    return "ready";
  } catch (thrown) {
    const cancelled = signal.aborted;
    bar.finish(cancelled ? "cancelled" : "failed");
    const error = toRuntimeError(thrown);
    ui.line(cancelled ? style.yellow("cancelled") : style.red(`error (${error.code}): ${error.message}`));
    return cancelled ? "cancelled" : "failed";
  }
}
