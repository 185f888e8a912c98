import type { Hono } from "hono";
import type { HttpDeps } from "../http-deps.js";
import type { ModelResolver } from "../resolve-model.js";
import type { SessionGate } from "../turn/session-gate.js";
import type { ErrorShape } from "./error-shape.js";
import type { TurnServing } from "./turn-responder.js";

/** What a dialect's routes are given: the app's deps and the shared parts every dialect's turns use. */
export interface DialectRoutes extends TurnServing {
  deps: HttpDeps;
  /** The one `model` -> agent resolution (resolveTurnTarget). */
  resolver: ModelResolver;
  gate: SessionGate;
}

/**
 * An HTTP API dialect (chat completions, Responses, Messages): its own folder, its routes, a
 * TurnResponder (dialect-turn.ts) per turn, and the error shape its clients parse. app.ts lists
 * the dialects; a new one (a WebSocket Responses transport, say) is one more entry.
 */
export interface HttpDialect {
  /** Route patterns (Hono's; `/v1/x/*` covers `/v1/x` too) whose every refusal takes `errorShape`. */
  paths: readonly string[];
  errorShape: ErrorShape;
  register(app: Hono, routes: DialectRoutes): void;
}
