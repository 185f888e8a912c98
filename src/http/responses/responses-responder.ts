import type { TurnOutcome } from "../../agent/turn-outcome.js";
import { RuntimeError, toRuntimeError } from "../../shared/runtime-error.js";
import { HttpError, toOpenAiError } from "../http-error.js";
import { typedEventSink, type TurnResponder } from "../responder/dialect-turn.js";
import { namedFrame } from "../sse/sse-frames.js";
import type { RunTurn } from "../sse/turn-stream.js";
import { ResponseBuilder, type ResponseEvent } from "./response-builder.js";
import type { ResponseIdentity, ResponseObject } from "./response-object.js";
import { responseRecord } from "./response-record.js";
import type { ResponseStore } from "./response-store.js";
import type { ResponseTurn } from "./response-turn.js";
import type { RequestMcpTools } from "./request-mcp-tools.js";
import { unansweredCalls } from "../../agent/turn-state.js";
import type { ChatMessage } from "../../shared/conversation/chat-message.js";

export interface ResponseAnswer {
  run: RunTurn;
  turn: ResponseTurn;
  identity: ResponseIdentity;
  /** Set when the response is to be stored (`store` true). */
  store: ResponseStore | undefined;
  /** The request's key name: the stored response is its (ResponseReader). */
  owner: string;
  /** The conversation's KV cache key, kept in the record so that a continuation uses it too. */
  cacheKey: string;
  degradationTier: () => string;
  /** The request's MCP servers: listed before the turn, closed after it; null when it names none. */
  mcp: RequestMcpTools | null;
}

/**
 * A refusal in this dialect's terms: an over-long conversation is OpenAI's
 * `context_length_exceeded` naming the input; what the engines call `response_format` is `text.format` here.
 */
function refusal(error: unknown): unknown {
  const runtime = toRuntimeError(error);
  if (runtime.code === "context_overflow") return new HttpError("context_length_exceeded", runtime.message, "input");
  const param = runtime.details?.param;
  if (typeof param === "string" && param.startsWith("response_format")) {
    const renamed = param.replace(/^response_format(\.json_schema)?/, "text.format");
    return new RuntimeError(runtime.code, runtime.message.replaceAll(param, renamed), { details: { ...runtime.details, param: renamed }, cause: error });
  }
  return error;
}

/**
 * The Responses API's answer to a turn: a Response object, or its SSE events. A failure after the
 * start ends the stream with `response.failed`; a quiet stream gets `response.in_progress` (Codex
 * CLI's idle timeout counts events, not comments). A stored response is written before its last
 * event is sent, so a client may continue it (previous_response_id) the moment it sees
 * `response.completed`.
 */
export function responsesResponder(answer: ResponseAnswer): TurnResponder {
  return ({ send, signal }) => {
    const builder = newBuilder(answer, typedEventSink(send));
    return {
      run: withMcp(answer, builder),
      open: () => builder.start(),
      onEvent: (event) => builder.onAgentEvent(event),
      heartbeat: () => {
        const event = builder.heartbeat();
        return namedFrame(event.type, event);
      },
      refusal,
      finish: (outcome) => complete(builder, outcome, answer, signal),
      fail: (error) => {
        const mapped = toOpenAiError(refusal(error));
        if (mapped.body.error.code !== "cancelled") builder.fail(mapped.body.error.message);
      },
    };
  };
}

function newBuilder(options: ResponseAnswer, sink: (event: ResponseEvent) => void): ResponseBuilder {
  const { turn, mcp } = options;
  const approved = turn.resume?.decision === "approve" ? { id: turn.resume.approvalId, callId: turn.resume.callId } : undefined;
  return new ResponseBuilder(options.identity, sink, turn.namespaced, options.degradationTier, turn.warnings, { origin: (name) => mcp?.origin(name), approved, approvals: options.store !== undefined });
}

/**
 * The turn, after the request's MCP servers were connected and listed (`mcp_list_tools` items
 * first in the output); the connections are closed when the turn settles, however it ends.
 */
function withMcp(options: ResponseAnswer, builder: ResponseBuilder): RunTurn {
  const { mcp } = options;
  if (mcp === null) return options.run;
  return async (turnOptions) => {
    try {
      builder.mcp.listing(mcp.servers.map((server) => server.label));
      await mcp.start(turnOptions.signal);
      builder.mcp.listed(mcp.listed());
      options.turn.warnings.push(...mcp.warnings);
      return await options.run(turnOptions);
    } finally {
      await mcp.close();
    }
  };
}

/** Finishes the response, stores it when asked, then sends its last event. */
async function complete(builder: ResponseBuilder, outcome: TurnOutcome, options: ResponseAnswer, signal: AbortSignal): Promise<ResponseObject> {
  const toolCalls = outcome.tool_calls ?? [];
  const response = builder.finish(outcome);
  if (options.store !== undefined && !signal.aborted) {
    const { turn, identity } = options;
    const approval = builder.approvalRequest();
    const pendingApproval = approval === null ? undefined : pendingCall(approval.id, outcome, [...turn.context, ...(outcome.turn_messages ?? [])]);
    await options.store.put(
      responseRecord({ identity, response, inputItems: turn.inputItems, context: turn.context, toolCalls, turnMessages: outcome.turn_messages, pendingApproval, cacheKey: options.cacheKey, owner: options.owner }),
    );
  }
  builder.announce(response);
  return response;
}

/** The call a paused turn waits at: the first unanswered call of the gated tool (calls settle in order). */
function pendingCall(id: string, outcome: TurnOutcome, conversation: readonly ChatMessage[]): { id: string; call_id: string } | undefined {
  const call = unansweredCalls(conversation).find((candidate) => candidate.name === outcome.pending_approval?.tool);
  return call === undefined ? undefined : { id, call_id: call.id };
}
