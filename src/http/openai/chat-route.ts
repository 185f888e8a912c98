import type { Hono } from "hono";
import { readJson } from "../request/read-json.js";
import { requestRecord } from "../request/request-record.js";
import { openAiErrorShape } from "../responder/error-shape.js";
import type { DialectRoutes, HttpDialect } from "../responder/http-dialect.js";
import { respondToTurn } from "../responder/turn-responder.js";
import { chatResponder } from "./chat-responder.js";
import { resolveChatTurn } from "./chat-turn.js";
import { newCompletionIdentity } from "./completion.js";

/** POST /v1/chat/completions: one agent turn (resolved from the body by chat-turn.ts) answered as OpenAI JSON or SSE. */
function registerChatRoute(app: Hono, routes: DialectRoutes): void {
  const { deps } = routes;
  app.post("/v1/chat/completions", async (c) => {
    const turn = await resolveChatTurn(c, await readJson(c), deps, routes.resolver, routes.gate);
    const { body, target } = turn;
    return respondToTurn(c, routes, {
      stream: body.stream === true,
      logger: turn.log,
      onDone: turn.release,
      responder: chatResponder({
        start: turn.start,
        identity: newCompletionIdentity(target.id, requestRecord(c)?.id),
        events: body.events === true || c.req.header("x-local-ai-events") === "1",
        returnProgress: body.return_progress === true,
        includeUsage: body.stream_options?.include_usage === true,
        degradationTier: target.degradationTier,
      }),
    });
  });
}

export const chatDialect: HttpDialect = { paths: ["/v1/chat/*"], errorShape: openAiErrorShape, register: registerChatRoute };
