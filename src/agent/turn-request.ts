import type { Logger } from "pino";
import type { Config } from "../config/schema.js";
import type { SamplingOverrides } from "../shared/conversation/sampling-overrides.js";
import type { Engine } from "../engine/engine.js";
import type { MetricsRecorder } from "../shared/metrics-recorder.js";
import type { HistoryReader, MemoryIndex, SessionStore } from "../store/store-types.js";
import type { ToolScope } from "../tools/scoped-tool-provider.js";
import type { ElicitationAnswer, ToolProvider } from "../tools/tool-types.js";
import type { ApprovalCallback, ElicitationCallback, EmitEvent } from "./events.js";
import type { InputPart, PromptRef } from "./mcp-input.js";
import type { TurnMeterLabels } from "./turn-meter.js";

/* The turn types SessionRunner takes and the turn core runs: their own file, so neither imports the other. */

export interface TurnRequest {
  user_id?: string | undefined;
  session_id?: string | undefined;
  agent?: string | undefined;
  /** A `llama.models` name the agent runs on instead of its own model (a downloaded model served on demand). */
  model?: string | undefined;
  /** Text or content parts; a `resource` part attaches an MCP resource's contents. */
  input?: string | InputPart[] | undefined;
  /** An MCP prompt whose messages open the turn instead of `input`. */
  prompt?: PromptRef | undefined;
  resume?: boolean | undefined;
  approve_execution?: boolean | undefined;
  /** Resuming a turn paused on a server's question: the user's answer (absent: cancel). */
  elicitation?: ElicitationAnswer | undefined;
  /** Per-request sampling and output controls (OpenAI fields) over the agent's config. */
  overrides?: SamplingOverrides | undefined;
  /** Seconds the model stays loaded once idle after this turn (0: unload then; -1: never); absent: its idle_unload_s. */
  keep_alive?: number | undefined;
}

/** How a front door takes part in a turn: its cancel signal, its event sink, and (if it can ask its user) approvals. */
export interface TurnOptions {
  signal: AbortSignal;
  emit: EmitEvent;
  askApproval?: ApprovalCallback | undefined;
  /** A front door that can ask its user a server's question mid-turn (terminal chat, ACP). */
  askElicitation?: ElicitationCallback | undefined;
  /**
   * A front door that answers in a later request (stdio v1, JSON-RPC, session-mode HTTP): a server's question pauses
   * the turn with `pending_elicitation` while the call keeps running. Without this or
   * askElicitation the server is declined.
   */
  pauseForElicitation?: boolean | undefined;
  /**
   * This turn's tools instead of the runner's own (the config's servers): a front door whose
   * sessions bring tools of their own (ACP: the editor's MCP servers and file tools) composes one.
   */
  tools?: ToolProvider | undefined;
  /** The tools this caller may run (an HTTP API key's): calls outside it fail as tool errors the model sees. */
  toolScope?: ToolScope | undefined;
  /** The front door's logger for this request (its request id on every line); the runner's own without it. */
  logger?: Logger | undefined;
  /**
   * The front door this turn's tokens are counted under in the metrics (absent: endpoint and key
   * `none`); `false`: the front door counts `outcome.usage` in a request series of its own (HTTP).
   */
  meter?: TurnMeterLabels | false | undefined;
}

/** What a client-kept (stateless) turn takes from its front door. */
export type StatelessTurnOptions = Pick<TurnOptions, "signal" | "emit" | "toolScope" | "logger" | "meter">;

export interface SessionRunnerDeps {
  config: Config;
  /** The model's engine, created (and its implementation imported) on first use. */
  engineFor: (modelName: string) => Promise<Engine>;
  tools: ToolProvider;
  store: SessionStore;
  memory: MemoryIndex;
  logger: Logger;
  /** Tool calls and approvals waiting (docs/operations.md); none reported without it. */
  metrics?: MetricsRecorder;
  /** Lock-free reads of finished turns (get_history while a turn runs); without it reads take the lock. */
  history?: HistoryReader;
}
