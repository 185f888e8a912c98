// One llama-server child: spawned detached (its own process group, so a stop reaches anything
// it forks) under the parent watchdog (it dies with us, even on a SIGKILL of ours), env
// allow-listed, stdout/stderr drained line by line into our logger and a bounded tail. Stopping
// is TERM to the group, then KILL after a grace period.
import type { Result } from "execa";
import type { Logger } from "../../logging/create-logger.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import { childEnv } from "./child-env.js";
import type { ChildRegistry } from "../../shared/process/child-registry.js";
import type { LogTail } from "../../shared/process/log-tail.js";
import { OutputLineSplitter } from "../../shared/process/output-lines.js";
import { watchdogEnv, withParentWatchdog } from "../../shared/process/parent-watchdog.js";
import { killTree } from "../../shared/process/kill-tree.js";
import { hostProcessPlatform, supervisedDetached, type ProcessPlatform } from "../../shared/process/process-platform.js";
import { redactServerArgs } from "./server-args.js";
import { delay as sleep } from "../../shared/abort.js";

export interface ExitInfo {
  code: number | null;
  signal: string | null;
  /** Date.now() when the exit was observed. */
  at: number;
}

export interface ServerProcessOptions {
  binary: string;
  args: string[];
  /** Child logger ({component: "llama-server", model}); every output line goes here at debug. */
  logger: Logger;
  tail: LogTail;
  /** The runtime's registry: the group is in it while it runs (the app's exit hook kills what is left). */
  children: ChildRegistry;
  /** Called for every output line (the supervisor extends its startup deadline on progress). */
  onLine?: (line: string) => void;
  /** How to spawn and stop processes here; the host's by default. */
  platform?: ProcessPlatform;
}

export class ServerProcess {
  readonly exited: Promise<ExitInfo>;
  private exitInfo: ExitInfo | null = null;

  private constructor(
    readonly pid: number,
    readonly startedAt: number,
    exited: Promise<ExitInfo>,
    private readonly platform: ProcessPlatform,
  ) {
    this.exited = exited.then((info) => {
      this.exitInfo = info;
      return info;
    });
  }

  /** Spawns the child; throws binary_missing / engine_unavailable when it cannot even start. */
  static async spawn(options: ServerProcessOptions): Promise<ServerProcess> {
    const { logger, tail } = options;
    // execa (and its dependency tree) is imported on the first spawn only: it is off every start-up path.
    const { execa } = await import("execa");
    const platform = options.platform ?? hostProcessPlatform();
    const command = withParentWatchdog(options.binary, options.args, platform.os);
    const subprocess = execa(command.file, command.args, {
      // Windows: not detached, so the job object that holds us ends it with us.
      detached: supervisedDetached(platform),
      cleanup: false, // we stop the group ourselves; execa's cleanup would only signal the leader
      // The watchdog's lifeline: never written to; its end closing (we died) stops the server.
      stdin: command.watched ? "pipe" : "ignore",
      stdout: "pipe",
      stderr: "pipe",
      buffer: false,
      reject: false,
      env: watchdogEnv(childEnv(), command),
      extendEnv: false,
      windowsHide: true,
    });
    const pid = subprocess.pid;
    if (pid === undefined) {
      const result = await subprocess;
      const code = (result as Result & { code?: string }).code;
      const via = command.watched ? ` through ${command.file}` : "";
      const message = `Cannot start llama-server (${options.binary}${via}): ${result.shortMessage}`;
      throw new RuntimeError(code === "ENOENT" || code === "EACCES" ? "binary_missing" : "engine_unavailable", message, {
        details: { binary: options.binary, ...(code === undefined ? {} : { errno: code }) },
      });
    }
    const { children } = options;
    children.add(pid);
    // An EPIPE once the watchdog is gone is expected; nothing is ever written.
    subprocess.stdin?.on("error", () => undefined);
    logger.info({ child_pid: pid, binary: options.binary, args: redactServerArgs(options.args), watchdog: command.watched }, "llama-server spawned");

    const drain = (stream: NodeJS.ReadableStream | null, name: "stdout" | "stderr"): Promise<void> => {
      if (stream === null) return Promise.resolve();
      const splitter = new OutputLineSplitter((line) => {
        if (line === "") return;
        tail.push(line);
        logger.debug({ stream: name }, line);
        options.onLine?.(line);
      });
      return new Promise((resolve) => {
        stream.on("data", (chunk: Buffer) => splitter.push(chunk));
        stream.once("error", () => resolve());
        stream.once("close", () => {
          splitter.end();
          resolve();
        });
      });
    };
    const drained = Promise.all([drain(subprocess.stdout, "stdout"), drain(subprocess.stderr, "stderr")]);

    const exited = subprocess.then(async (result) => {
      // node destroys the child's stdin when it exits: that EOF ends the server's watchdog too.
      children.delete(pid);
      await drained; // the last lines (the reason it died) belong in the tail before anyone reads it
      const info: ExitInfo = { code: result.exitCode ?? null, signal: result.signal ?? null, at: Date.now() };
      logger.info({ child_pid: pid, ...info }, "llama-server exited");
      return info;
    });
    return new ServerProcess(pid, Date.now(), exited, platform);
  }

  /** null while running. */
  get exit(): ExitInfo | null {
    return this.exitInfo;
  }

  get running(): boolean {
    return this.exitInfo === null;
  }

  /** Sends a signal to the whole group (tests and the crash path use SIGKILL). */
  signal(signal: NodeJS.Signals): void {
    if (this.running) void killTree(this.pid, signal, this.platform);
  }

  /** TERM to the group; KILL after `graceMs`. Resolves once the child is gone. */
  async stop(graceMs: number): Promise<ExitInfo & { forced: boolean }> {
    if (this.exitInfo !== null) return { ...this.exitInfo, forced: false };
    // Windows has no TERM for a console program: the tree is ended at once there.
    void killTree(this.pid, "SIGTERM", this.platform);
    const timer = new AbortController();
    const graceful = await Promise.race([
      this.exited.then(() => true),
      sleep(graceMs, timer.signal, { unref: true }).then(() => false, () => true),
    ]);
    timer.abort();
    if (!graceful) void killTree(this.pid, "SIGKILL", this.platform);
    return { ...(await this.exited), forced: !graceful };
  }
}
