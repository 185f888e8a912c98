import type { ElicitationAnswer, ToolCallResult } from "../tools/tool-types.js";

/** A tool call still running while its turn is paused on its server's question. */
export interface ParkedCall {
  callId: string;
  /** The call's result, whenever it comes (after the answer, or after the timeout's decline). */
  result: Promise<ToolCallResult>;
  /** Answers the waiting server (a no-op once it was answered or timed out). */
  answer: (answer: ElicitationAnswer) => void;
}

/**
 * The calls parked by paused turns, one per session (a paused session runs nothing else). Held
 * by the SessionRunner for the process's life: a restart loses them (the resumed turn then tells
 * the model the call was interrupted), as it loses any running call.
 */
export class ElicitationPark {
  private readonly parked = new Map<string, ParkedCall>();

  put(key: string, call: ParkedCall): void {
    this.drop(key);
    this.parked.set(key, call);
  }

  /** Removes and returns the session's parked call. */
  take(key: string): ParkedCall | undefined {
    const call = this.parked.get(key);
    this.parked.delete(key);
    return call;
  }

  /** A session that moves on without resuming: its server gets a decline; the call's result is dropped. */
  drop(key: string): boolean {
    const call = this.take(key);
    call?.answer({ action: "decline" });
    return call !== undefined;
  }
}
