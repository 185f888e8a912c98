import type { Logger } from "pino";
import { withCoalescedEmit } from "../agent/delta-coalescer.js";
import type { SessionRunner } from "../agent/session-runner.js";
import type { TurnRequest } from "../agent/turn-request.js";
import { settleInFlight } from "../serving/shutdown-sequence.js";
import type { PendingCall, PodErrorCode, PodEvent, PodState, TurnStopReason } from "./pod-event-types.js";
import { PodEventMapper, podErrorFor } from "./pod-events.js";

/** Where a Pod turn's tokens are counted (a pod has no keys). */
const POD_TURNS = { endpoint: "pod", key: "none" } as const;

export interface PodSessionDeps {
  runner: () => SessionRunner;
  sessionId: string;
  podName: string;
  /** To every listener. */
  broadcast: (event: PodEvent) => void;
  logger: Logger;
  /** Text deltas within this many ms leave as one `delta` event (0 = one per engine chunk). */
  coalesceMs?: number;
}

/** A refusal of the method (already_running, not_running, not_paused), routed by the transport; null when accepted. */
export type Reply = PodEvent | null;

/**
 * The pod's state machine over the SessionRunner: idle -> running -> idle | paused; paused ->
 * running (resume) | idle (cancel). First wins: a method that does not fit the state is refused
 * (the Reply), and the running turn is untouched.
 */
export class PodSession {
  private state: PodState = "idle";
  private turn = 0;
  private controller: AbortController | null = null;
  private pending: PendingCall | null = null;
  private callCount = 0;
  private turnDone: Promise<void> = Promise.resolve();
  /** A discard of a cancelled pause still writing; the next turn waits for it. */
  private settling: Promise<void> = Promise.resolve();

  constructor(private readonly deps: PodSessionDeps) {}

  /** A paused turn left by an earlier pod on this session comes back paused. */
  async restore(): Promise<void> {
    const paused = await this.deps.runner().pausedCall(this.deps.sessionId);
    if (paused === null) return;
    this.turn = 1;
    const { pending } = new PodEventMapper(this.turn).pendingCall(paused.tool, paused.args);
    this.pending = pending;
    this.callCount = 1;
    this.state = "paused";
    this.deps.logger.info({ tool: paused.tool }, "the session has a paused turn; waiting for resume or cancel");
  }

  status(): PodEvent {
    return {
      event: "status",
      data: { state: this.state, session_id: this.deps.sessionId, pod_name: this.deps.podName, ...(this.state === "paused" && this.pending ? { pending: this.pending } : {}) },
    };
  }

  run(input: string): Reply {
    if (this.state === "running") return refuse("already_running", "Pod is already executing a turn");
    if (this.state === "paused") return refuse("already_running", "Pod has a turn paused for approval: resume or cancel it first");
    this.turn++;
    this.start({ input }, new PodEventMapper(this.turn));
    return null;
  }

  resume(): Reply {
    if (this.state === "idle") return refuse("not_running", "No turn is running or paused");
    if (this.state === "running" || this.pending === null) return refuse("not_paused", "The turn is running, not paused");
    const mapper = new PodEventMapper(this.turn, this.pending, this.callCount);
    this.pending = null;
    this.start({ resume: true, approve_execution: true }, mapper);
    return null;
  }

  cancel(): Reply {
    if (this.state === "idle") return refuse("not_running", "No turn is running or paused");
    if (this.state === "running") {
      this.controller?.abort("cancelled by a client");
      return null;
    }
    // Paused: the call is declined and the turn dropped (the tool never runs, the history is unchanged).
    const pending = this.pending;
    this.pending = null;
    if (pending) this.emit({ event: "tool_result", data: { id: pending.id, output: "declined: the turn was cancelled", is_error: true } });
    this.settling = this.deps.runner().discardPaused(this.deps.sessionId).catch((error: unknown) => {
      this.deps.logger.error({ err: error }, "could not discard the paused turn");
    });
    this.endTurn("finished", "cancelled");
    return null;
  }

  async history(): Promise<PodEvent> {
    try {
      return { event: "history", data: { items: await this.deps.runner().history(this.deps.sessionId) } };
    } catch (error) {
      this.deps.logger.error({ err: error }, "get_history failed");
      return { event: "error", data: podErrorFor(error) };
    }
  }

  /** Shutdown: a running turn gets `graceMs` to finish, then is cancelled; a paused one stays on disk. */
  async stop(graceMs: number): Promise<void> {
    const turn = { settled: () => this.turnDone, abortAll: (reason: string) => this.controller?.abort(reason), describe: () => ({}) };
    await settleInFlight(turn, graceMs, this.deps.logger, "cancelling the running turn", { reason: "pod shutting down", afterAbortMs: Infinity });
    await this.settling;
  }

  private start(request: Omit<TurnRequest, "session_id">, mapper: PodEventMapper): void {
    const controller = new AbortController();
    this.controller = controller;
    this.setState("running");
    this.emit({ event: "turn_start", data: { turn: this.turn } });
    this.turnDone = this.drive(request, mapper, controller);
  }

  private async drive(request: Omit<TurnRequest, "session_id">, mapper: PodEventMapper, controller: AbortController): Promise<void> {
    try {
      await this.settling;
      const result = await withCoalescedEmit(
        (event) => mapper.map(event).forEach((podEvent) => this.emit(podEvent)),
        { windowMs: this.deps.coalesceMs ?? 0 },
        (emit) => this.deps.runner().runTurn({ ...request, session_id: this.deps.sessionId }, { signal: controller.signal, emit, meter: POD_TURNS }),
      );
      if (result.finish_reason === "paused" && result.pending_approval !== undefined) {
        const { pending, events } = mapper.pendingCall(result.pending_approval.tool, result.pending_approval.args);
        events.forEach((event) => this.emit(event));
        this.pending = pending;
        this.callCount = mapper.callCount;
        this.endTurn("paused");
        return;
      }
      this.endTurn("finished");
    } catch (error) {
      if (controller.signal.aborted) {
        this.endTurn("finished", "cancelled");
        return;
      }
      const wire = podErrorFor(error);
      this.deps.logger.error({ err: error, code: wire.code }, "turn failed");
      this.emit({ event: "error", data: wire });
      this.endTurn("finished", "error");
    }
  }

  private endTurn(result: "finished" | "paused", reason?: TurnStopReason): void {
    this.controller = null;
    this.emit({ event: "turn_end", data: { turn: this.turn, result, ...(reason ? { reason } : {}) } });
    this.setState(result === "paused" ? "paused" : "idle");
  }

  private setState(state: PodState): void {
    this.state = state;
    this.emit(this.status());
  }

  private emit(event: PodEvent): void {
    this.deps.broadcast(event);
  }
}

function refuse(code: PodErrorCode, message: string): PodEvent {
  return { event: "error", data: { code, message } };
}
