import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { AgentConfig } from "../config/schema.js";
import type { ChatMessage } from "../shared/conversation/chat-message.js";
import type { SamplingOverrides } from "../shared/conversation/sampling-overrides.js";
import type { ToolSpec } from "../shared/conversation/tool-spec.js";
import type { Engine } from "../engine/engine.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { ToolProvider } from "../tools/tool-types.js";
import { inputText } from "./prompt.js";
import type { TurnPlan } from "./turn-core.js";

/** A turn whose conversation the client keeps (OpenAI clients resend it whole every time). */
export interface StatelessTurnRequest {
  agent: string;
  /** A `llama.models` name the agent runs on instead of its own model (a downloaded model served on demand). */
  model?: string;
  /** The whole conversation, system messages included, in order. */
  messages: ChatMessage[];
  /** The client's own functions: offered instead of the agent's tools, run by the client. */
  clientTools?: ToolSpec[];
  overrides?: SamplingOverrides;
  approve_execution?: boolean;
  /** The KV cache key of this conversation (the client's prompt_cache_key): engines keep its cache warm. */
  cacheKey?: string;
  /** "disabled": a conversation that does not fit is a `context_overflow` instead of trimmed history. */
  truncation?: "auto" | "disabled";
  /** Seconds the model stays loaded once idle after this request (0: unload then; -1: never); absent: its idle_unload_s. */
  keep_alive?: number;
  /**
   * Tools of this request that run inside the turn (the Responses API's `mcp` tools), offered
   * instead of the agent's own, beside `clientTools`. The caller starts and closes them.
   */
  tools?: ToolProvider;
  /**
   * The front door keeps the conversation (the Responses store): a gated call pauses the turn
   * (`paused`, the conversation so far in `turn_messages`), and a later request resumes it.
   */
  pausable?: boolean;
  /** Resuming a paused conversation: its last calls are unanswered; the first is approved or declined. */
  resumeDecision?: "approve" | "decline";
}

/** What a client-kept turn is run with: the agent resolved once, its engine, its tools as the caller may run them. */
export interface StatelessTurnAgent {
  agentName: string;
  agent: AgentConfig;
  engine: Engine;
  tools: ToolProvider;
  logger: Logger;
}

/**
 * A client-kept turn's plan: its context is the request's conversation, and nothing is read from
 * or written to data_dir: no session, no history, no checkpoint, no memory (snippets of other
 * conversations must not leak into a client's own). The agent's MCP tools still run inside the
 * turn unless the client brings its own.
 */
export function planStatelessTurn(run: StatelessTurnAgent, request: StatelessTurnRequest): TurnPlan {
  const { agentName, agent } = run;
  const { system, history, turn } = splitConversation(agent.system_prompt, request.messages, request.resumeDecision !== undefined);
  const traceId = randomBytes(8).toString("hex");
  const userMessage = turn[0];
  const log = run.logger.child({ trace_id: traceId, agent: agentName, stateless: true });
  const state = { messages: turn, step: 0, parseErrors: 0 };
  return {
    agentName,
    agent,
    engine: run.engine,
    tools: run.tools,
    requestTools: request.tools,
    clientTools: request.clientTools,
    turn: state,
    traceId,
    sessionId: null,
    userInput: userMessage?.role === "user" ? inputText(userMessage.content) : "",
    warnings: [],
    overrides: request.overrides,
    accepts: request.messages,
    context: { from: "request", system, history, truncation: request.truncation },
    persist: {
      saveCheckpoint: async () => undefined,
      finish: async (outcome) => {
        log.info({ steps: state.step, outcome: outcome.kind }, "stateless turn finished");
      },
      // Nothing is stored, so there is no turn to resume later: the gated tool is not run.
      pausedWarning: (tool) =>
        request.pausable === true ? undefined : `approval_required: ${tool} was not run (a conversation kept by the client cannot pause; send approve_execution: true, or name a session_id to pause and resume)`,
    },
    loop: {
      approveExecution: request.approve_execution === true,
      ...(request.resumeDecision === undefined ? {} : { resumeDecision: request.resumeDecision }),
      cacheKey: request.cacheKey,
    },
    log,
  };
}

/**
 * The agent's system prompt first, the client's system messages after it (they add to it, never
 * replace it); then the conversation before the last user message as history, and from it on as
 * this turn (a tool round trip continues the turn the client's tool calls began).
 */
export function splitConversation(systemPrompt: string, messages: readonly ChatMessage[], resuming = false): { system: ChatMessage; history: ChatMessage[]; turn: ChatMessage[] } {
  const clientSystem = messages.flatMap((m) => (m.role === "system" && m.content.trim() !== "" ? [m.content] : []));
  const system: ChatMessage = { role: "system", content: [systemPrompt, ...clientSystem].join("\n\n") };
  const rest = messages.filter((m) => m.role !== "system");
  const last = rest.findLastIndex((m) => m.role === "user");
  if (last === -1) throw new RuntimeError("invalid_params", "messages must contain a user message", { details: { param: "messages" } });
  const turn = rest.slice(last);
  const tail = turn.at(-1);
  if (!resuming && tail?.role === "assistant" && (tail.tool_calls ?? []).length > 0) {
    throw new RuntimeError("invalid_params", "the last assistant message has tool_calls without tool results: send a tool message for each call", { details: { param: "messages" } });
  }
  return { system, history: rest.slice(0, last), turn };
}
