/**
 * Holds SIGTERM / SIGINT from the first instant of the process until a command is ready to handle
 * them: importing the CLI and its command takes a few hundred ms, and a host that stops its child
 * at once (an Electron app quitting during start-up) would otherwise kill it mid-start with no
 * clean exit. A serve command takes the held signal over (it then shuts down gracefully at once);
 * any other command gets it re-raised with the default action, as if there had been no latch.
 */
export interface SignalLatch {
  /** Stops holding signals; returns the first one that arrived meanwhile. */
  release(): NodeJS.Signals | undefined;
}

/** The signals a serve command handles as a stop: SIGBREAK too on Windows (see shutdown-signals.ts). */
export function stopSignals(os: NodeJS.Platform): NodeJS.Signals[] {
  return os === "win32" ? ["SIGTERM", "SIGINT", "SIGBREAK"] : ["SIGTERM", "SIGINT"];
}

export function latchSignals(target: Pick<NodeJS.Process, "on" | "off"> = process, os: NodeJS.Platform = process.platform): SignalLatch {
  const held = stopSignals(os);
  let first: NodeJS.Signals | undefined;
  const hold = (signal: NodeJS.Signals): void => {
    first ??= signal;
  };
  for (const signal of held) target.on(signal, hold);
  let released = false;
  return {
    release: () => {
      if (!released) for (const signal of held) target.off(signal, hold);
      released = true;
      return first;
    },
  };
}

/** For commands that do not handle signals: stop holding, and let a held signal do what it would have done. */
export function releaseToDefault(latch: SignalLatch | undefined): void {
  const held = latch?.release();
  if (held !== undefined) process.kill(process.pid, held);
}
