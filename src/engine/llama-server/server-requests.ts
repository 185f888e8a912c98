// The requests in flight on a llama-server child, each with the same guarantees: the caller's abort
// and close() both end it, a crash of the child mid-request becomes engine_unavailable with the
// child's last words, and after an abort (or a consumer that stopped early) the server's slots must
// go idle, or the server is restarted.
import OpenAI from "openai";
import type { Logger } from "../../logging/create-logger.js";
import { RuntimeError, toRuntimeError, type ErrorCode } from "../../shared/runtime-error.js";
import { delay as sleep } from "../../shared/abort.js";
import { errorExcerpt } from "./error-excerpt.js";
import type { LaunchedServer } from "./launch.js";
import { readSlots } from "./server-http.js";
import type { ServerSupervisor } from "./supervisor.js";

/** After an abort the slot must be idle within this long, or the server is restarted (longer mid-prompt: ServerRequestOptions.settleMs). */
const ABORT_SETTLE_MS = 1000;
/** A failed stream: wait this long for the child's exit to tell a crash from an HTTP error. */
const CRASH_CONFIRM_MS = 500;

export interface ServerRequestOptions {
  /** Failures with these codes are rethrown as they are (no crash check). */
  passThrough: readonly ErrorCode[];
  /** How long the server may take to stop after an abort at this moment; null or absent: ABORT_SETTLE_MS. */
  settleMs?: () => number | null;
}

export class ServerRequests {
  private readonly clients = new WeakMap<LaunchedServer, OpenAI>();
  /** Generations in flight per server (the abort check tolerates this many busy slots). */
  private readonly inFlight = new Map<LaunchedServer, number>();
  private readonly active = new Set<AbortController>();
  private readonly background = new Set<Promise<void>>();
  private readonly lifetime = new AbortController();

  constructor(
    private readonly modelName: string,
    private readonly supervisor: ServerSupervisor,
    private readonly log: Logger,
  ) {}

  /** Runs `work` on `server` with the guarantees above; it gets the server's client and our signal. */
  async *run<T>(
    server: LaunchedServer,
    callerSignal: AbortSignal | undefined,
    options: ServerRequestOptions,
    work: (client: OpenAI, signal: AbortSignal) => AsyncIterable<T>,
  ): AsyncGenerator<T, void, undefined> {
    // Our own controller: the caller's abort and close() both end the request.
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(callerSignal?.reason);
    callerSignal?.addEventListener("abort", onAbort, { once: true });
    if (callerSignal?.aborted === true) controller.abort(callerSignal.reason);
    this.active.add(controller);
    this.inFlight.set(server, (this.inFlight.get(server) ?? 0) + 1);
    let outcome: "done" | "crashed" | "stopped" = "stopped";
    try {
      yield* work(this.clientFor(server), controller.signal);
      outcome = "done";
    } catch (error) {
      const failure = toRuntimeError(error);
      if (options.passThrough.includes(failure.code)) throw failure;
      const crash = await this.crashError(server, failure);
      if (crash !== null) outcome = "crashed";
      throw crash ?? failure;
    } finally {
      callerSignal?.removeEventListener("abort", onAbort);
      this.active.delete(controller);
      const left = (this.inFlight.get(server) ?? 1) - 1;
      if (left > 0) this.inFlight.set(server, left);
      else this.inFlight.delete(server);
      // Aborted, failed, or the consumer stopped early: the server must really stop generating.
      if (outcome === "stopped") {
        const check = this.track(this.checkStopped(server, options.settleMs?.() ?? ABORT_SETTLE_MS));
        // A cancel is answered once the server has stopped (or is being restarted): its CPU is
        // free and the conversation's slot idle, holding what was read, for the retry.
        if (callerSignal?.aborted === true) await check;
      }
    }
  }

  /** Ends every request (shutting_down) and waits for the post-abort checks. */
  async close(): Promise<void> {
    this.lifetime.abort();
    for (const controller of this.active) controller.abort(new RuntimeError("shutting_down", "The engine is closing"));
    await Promise.allSettled([...this.background]);
  }

  private clientFor(server: LaunchedServer): OpenAI {
    let client = this.clients.get(server);
    if (client === undefined) {
      client = new OpenAI({ baseURL: `${server.endpoint.origin}/v1`, apiKey: server.endpoint.apiKey, maxRetries: 0 });
      this.clients.set(server, client);
    }
    return client;
  }

  /** A stream failure caused by the child dying becomes engine_unavailable with its last words. */
  private async crashError(server: LaunchedServer, failure: RuntimeError): Promise<RuntimeError | null> {
    const exited = await Promise.race([server.process.exited, sleep(CRASH_CONFIRM_MS, undefined, { unref: true }).then(() => null)]);
    if (exited === null) return null;
    const how = exited.signal !== null ? `was killed by ${exited.signal}` : `exited with code ${exited.code}`;
    const tail = errorExcerpt(this.supervisor.outputTail(60));
    return new RuntimeError(
      "engine_unavailable",
      `llama-server for model "${this.modelName}" ${how} during generation; it is being restarted${tail.length > 0 ? `. Last output: ${tail.join(" | ")}` : ""}`,
      { cause: failure, details: { pid: server.process.pid, exit_code: exited.code, exit_signal: exited.signal, stderr_tail: tail } },
    );
  }

  /**
   * After an abort the server's busy slots must drop to the generations still in flight within
   * ABORT_SETTLE_MS; a server that keeps generating for nobody is restarted.
   */
  private async checkStopped(server: LaunchedServer, settleMs: number): Promise<void> {
    const deadline = Date.now() + settleMs;
    const signal = this.lifetime.signal;
    for (;;) {
      if (!server.process.running || signal.aborted) return;
      const slots = await readSlots(server.endpoint, signal);
      if (slots === null) return; // this build has no /slots: nothing to check with
      const busy = slots.filter((slot) => slot.processing).length;
      if (busy <= (this.inFlight.get(server) ?? 0)) return;
      if (Date.now() >= deadline) {
        this.supervisor.requestRestart(server, `a slot kept generating ${settleMs} ms after its request was aborted`);
        return;
      }
      await sleep(50, signal);
    }
  }

  /** Runs `task` in the background (close() waits for it); the returned promise never rejects. */
  private track(task: Promise<void>): Promise<void> {
    const guarded = task.catch((error: unknown) => {
      if (!this.lifetime.signal.aborted) this.log.debug({ err: (error as Error).message }, "post-abort slot check failed");
    });
    this.background.add(guarded);
    void guarded.finally(() => this.background.delete(guarded));
    return guarded;
  }
}
