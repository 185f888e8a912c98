import type { Hono } from "hono";
import type { HttpDeps } from "../http-deps.js";
import type { InFlightWork } from "../in-flight-work.js";
import type { ModelResolver } from "../resolve-model.js";
import { readJson } from "../read-json.js";
import { startRequestWork } from "../request-work.js";
import type { SessionGate } from "../session-gate.js";
import { assignCompletionId, completionObject, newCompletionIdentity } from "./completion.js";
import { resolveChatTurn } from "./chat-turn.js";
import { requestRecord } from "../request-record.js";
import { streamTurn } from "./chat-stream.js";

/** POST /v1/chat/completions: one agent turn (resolved from the body by chat-turn.ts) answered as OpenAI JSON or SSE. */
export function registerChatRoute(app: Hono, deps: HttpDeps, resolver: ModelResolver, gate: SessionGate, inFlight: InFlightWork): void {
  app.post("/v1/chat/completions", async (c) => {
    const turn = await resolveChatTurn(c, await readJson(c), deps, resolver, gate);
    const { body, start } = turn;
    const work = startRequestWork({ requestSignal: c.req.raw.signal, shutdownSignal: deps.shutdownSignal, inFlight, onDone: turn.release, logger: turn.log });
    const identity = newCompletionIdentity(turn.model, requestRecord(c)?.id);
    const tier = (): string => deps.health().engines[turn.modelName]?.degradationTier ?? "NORMAL";
    if (body.stream === true) {
      return streamTurn({
        start, identity, controller: work.controller, release: work.finish, logger: turn.log, degradationTier: tier,
        events: body.events === true || c.req.header("x-local-ai-events") === "1",
        returnProgress: body.return_progress === true,
        includeUsage: body.stream_options?.include_usage === true,
        keepAliveMs: deps.settings.keepAliveMs ?? 10_000,
        coalesceMs: deps.settings.coalesceMs ?? 0,
        maxPendingBytes: deps.settings.maxPendingStreamBytes ?? 8 * 1024 * 1024,
      });
    }
    try {
      const outcome = await start({ signal: work.controller.signal, emit: () => undefined });
      assignCompletionId(identity, outcome.trace_id);
      return c.json(completionObject(identity, outcome, tier()));
    } finally {
      work.finish();
    }
  });
}
