import type { Logger } from "pino";
import type { TurnOutcome } from "../../agent/turn-outcome.js";
import { RuntimeError, toRuntimeError } from "../../shared/runtime-error.js";
import { HttpError, toOpenAiError } from "../http-error.js";
import { KEEP_ALIVE_FRAME, namedFrame, SSE_HEADERS } from "../sse/sse-frames.js";
import { firstStepOrMemoryWait, startTurnStream, turnFrameStream, type RunTurn } from "../sse/turn-stream.js";
import { ResponseBuilder, type ResponseEvent } from "./response-builder.js";
import type { ResponseIdentity, ResponseObject } from "./response-object.js";
import { responseRecord } from "./response-record.js";
import type { ResponseStore } from "./response-store.js";
import type { ResponseTurn } from "./response-turn.js";
import type { RequestMcpTools } from "./request-mcp-tools.js";
import { unansweredCalls } from "../../agent/turn-state.js";
import type { ChatMessage } from "../../shared/conversation/chat-message.js";

export interface RunResponseOptions {
  run: RunTurn;
  turn: ResponseTurn;
  identity: ResponseIdentity;
  /** Set when the response is to be stored (`store` true). */
  store: ResponseStore | undefined;
  /** The request's key name: the stored response is its (ResponseReader). */
  owner: string;
  /** The conversation's KV cache key, kept in the record so that a continuation uses it too. */
  cacheKey: string;
  controller: AbortController;
  /** Called once the turn has settled (counts and gates). */
  release: () => void;
  degradationTier: () => string;
  logger: Logger;
  stream: { keepAliveMs: number; coalesceMs: number; maxPendingBytes: number } | null;
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
 * Runs the turn and answers: JSON, or the Responses SSE stream. The stream's HTTP answer starts at
 * the first model step (`llm_start`), after the context was fitted: a request that cannot run
 * (too long, model missing) still gets a real HTTP error status. After that a failure ends the
 * stream with `response.failed`. A stored response is written before its last event is sent, so a
 * client may continue it (previous_response_id) the moment it sees `response.completed`.
 */
export async function runResponse(options: RunResponseOptions): Promise<Response> {
  if (options.stream === null) return runJson(options);
  return runStream(options, options.stream);
}

function newBuilder(options: RunResponseOptions, sink: (event: ResponseEvent) => void): ResponseBuilder {
  const { turn, mcp } = options;
  const approved = turn.resume?.decision === "approve" ? { id: turn.resume.approvalId, callId: turn.resume.callId } : undefined;
  return new ResponseBuilder(options.identity, sink, turn.namespaced, options.degradationTier, turn.warnings, { origin: (name) => mcp?.origin(name), approved, approvals: options.store !== undefined });
}

/**
 * The turn, after the request's MCP servers were connected and listed (`mcp_list_tools` items
 * first in the output); the connections are closed when the turn settles, however it ends.
 */
function withMcp(options: RunResponseOptions, builder: ResponseBuilder): RunTurn {
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

async function runJson(options: RunResponseOptions): Promise<Response> {
  const builder = newBuilder(options, () => undefined);
  try {
    const result = await withMcp(options, builder)({ signal: options.controller.signal, emit: (event) => builder.onAgentEvent(event) }).catch((error: unknown) => {
      throw refusal(error);
    });
    const response = await complete(builder, result, options);
    return Response.json(response);
  } finally {
    options.release();
  }
}

async function runStream(options: RunResponseOptions, settings: NonNullable<RunResponseOptions["stream"]>): Promise<Response> {
  const { controller, logger } = options;
  // Codex CLI's idle timeout counts events, not comments: a quiet stream gets response.in_progress.
  const heartbeat = { builder: null as ResponseBuilder | null };
  const frames = turnFrameStream(settings, controller, logger, () => {
    const event = heartbeat.builder?.heartbeat();
    return event === undefined ? KEEP_ALIVE_FRAME : namedFrame(event.type, event);
  });
  const send = (event: ResponseEvent): void => frames.push(namedFrame(event.type, event));
  const builder = newBuilder(options, send);
  heartbeat.builder = builder;
  builder.start();
  // Either the first model step began, or the turn ended without one: the stream answers both.
  const { turn } = await startTurnStream(frames, {
    run: withMcp(options, builder),
    controller,
    coalesceMs: settings.coalesceMs,
    startEvent: firstStepOrMemoryWait,
    sink: (event) => builder.onAgentEvent(event),
    release: options.release,
    refusal,
  });
  turn
    .then(
      async (result) => {
        await complete(builder, result, options);
      },
      (error: unknown) => {
        const mapped = toOpenAiError(refusal(error));
        if (mapped.body.error.code === "cancelled") return;
        if (mapped.status >= 500) logger.error({ err: error }, "turn failed mid-stream");
        builder.fail(mapped.body.error.message);
      },
    )
    .catch((error: unknown) => {
      // Storing failed (disk full): the client still gets a well-formed end.
      logger.error({ err: error }, "response could not be completed");
      builder.fail(toOpenAiError(error).body.error.message);
    })
    .finally(() => {
      frames.end();
      options.release();
    })
    .catch(() => undefined);
  return new Response(frames.body, { status: 200, headers: SSE_HEADERS });
}

/** Finishes the response, stores it when asked, then sends its last event. */
async function complete(builder: ResponseBuilder, outcome: TurnOutcome, options: RunResponseOptions): Promise<ResponseObject> {
  const toolCalls = outcome.tool_calls ?? [];
  const response = builder.finish(outcome);
  if (options.store !== undefined && !options.controller.signal.aborted) {
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
