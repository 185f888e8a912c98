// Reassembles streamed OpenAI tool-call deltas (keyed by `index`, possibly interleaved when the
// model calls several tools in parallel) into our start / delta / complete chunk sequence.
import { randomBytes } from "node:crypto";
import type { EngineChunk } from "../chat-types.js";
import type { ToolCall } from "../../shared/conversation/chat-message.js";

/** The fields of an OpenAI `delta.tool_calls[]` entry that we use. */
export interface ToolCallDelta {
  index: number;
  id?: string | undefined;
  function?: { name?: string | undefined; arguments?: string | undefined } | undefined;
}

interface PendingCall {
  id: string;
  name: string;
  arguments: string;
  /** tool_call_start emitted (it waits until the name is known). */
  started: boolean;
}

/** Servers that do not send an id (some llama.cpp forks) still need one the tool result can refer to. */
export function generateToolCallId(): string {
  return `call_${randomBytes(12).toString("base64url")}`;
}

export class ToolCallAccumulator {
  private readonly calls = new Map<number, PendingCall>();

  get size(): number {
    return this.calls.size;
  }

  /** Chunks to emit for one delta entry. */
  push(delta: ToolCallDelta): EngineChunk[] {
    const out: EngineChunk[] = [];
    const { index } = delta;
    let call = this.calls.get(index);
    if (call === undefined) {
      const id = delta.id !== undefined && delta.id !== "" ? delta.id : generateToolCallId();
      call = { id, name: "", arguments: "", started: false };
      this.calls.set(index, call);
    }
    // The name is sent once by OpenAI; some servers repeat it in every delta, so never concatenate.
    const name = delta.function?.name;
    if (call.name === "" && name !== undefined && name !== "") call.name = name;
    const fragment = delta.function?.arguments ?? "";
    if (!call.started && call.name !== "") {
      call.started = true;
      out.push({ type: "tool_call_start", index, id: call.id, name: call.name });
      // Arguments that arrived before the name are flushed as one delta right after the start.
      if (call.arguments !== "") out.push({ type: "tool_call_delta", index, delta: call.arguments });
    }
    if (fragment !== "") {
      call.arguments += fragment;
      if (call.started) out.push({ type: "tool_call_delta", index, delta: fragment });
    }
    return out;
  }

  /** At the end of the stream: the complete calls, in index order (starting any still unnamed). */
  finish(): EngineChunk[] {
    const out: EngineChunk[] = [];
    const indexes = [...this.calls.keys()].sort((a, b) => a - b);
    for (const index of indexes) {
      const call = this.calls.get(index);
      if (call === undefined) continue;
      if (!call.started) {
        call.started = true;
        out.push({ type: "tool_call_start", index, id: call.id, name: call.name });
        if (call.arguments !== "") out.push({ type: "tool_call_delta", index, delta: call.arguments });
      }
      const complete: ToolCall = { id: call.id, name: call.name, arguments: call.arguments };
      out.push({ type: "tool_call", index, call: complete });
    }
    return out;
  }
}
