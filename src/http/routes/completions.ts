import { randomBytes } from "node:crypto";
import type { Hono } from "hono";
import type { HttpDeps, ModelAccess } from "../http-deps.js";
import { UsageTally } from "../openai/completion.js";
import { parseCompletionsRequest } from "../openai/completions-schema.js";
import type { InFlightWork } from "../in-flight-work.js";
import { HttpError } from "../openai/errors.js";
import { textCompletion, type TextCompletionIdentity } from "../openai/text-completion.js";
import { readJson } from "../read-json.js";
import { requestAbort } from "../request-abort.js";
import { resolveModel } from "../resolve-model.js";
import { streamCompletion } from "./completion-stream.js";

/**
 * POST /v1/completions: plain text completion for autocomplete clients, on the model behind the
 * named agent (or a model named directly). No chat template, no tools, no agent loop, no session.
 */
export function registerCompletionsRoute(app: Hono, deps: HttpDeps, models: ModelAccess, inFlight: InFlightWork): void {
  app.post("/v1/completions", async (c) => {
    const body = parseCompletionsRequest(await readJson(c));
    const { id, modelName } = resolveModel(body.model, deps.agents, models.names);
    const engine = await models.engine(modelName);
    if (engine.complete === undefined) {
      throw new HttpError("completions_not_supported", `Model "${modelName}" (engine ${engine.kind}) cannot do text completion`, "model");
    }
    const identity: TextCompletionIdentity = { id: `cmpl-${randomBytes(12).toString("hex")}`, created: Math.floor(Date.now() / 1000), model: id };
    // The client going away (or shutdown) stops generation at once and frees the sequence.
    const abort = requestAbort(c.req.raw.signal, deps.shutdownSignal);
    const leave = inFlight.enter();
    const release = (): void => {
      abort.dispose();
      leave();
    };
    const chunks = engine.complete({ ...body.completion, signal: abort.controller.signal });
    if (body.stream) {
      return streamCompletion({
        chunks, identity, includeUsage: body.includeUsage, controller: abort.controller, release,
        keepAliveMs: deps.settings.keepAliveMs ?? 10_000,
        maxPendingBytes: deps.settings.maxPendingStreamBytes ?? 8 * 1024 * 1024,
        logger: deps.logger.child({ model: id, endpoint: "completions" }),
      });
    }
    try {
      let text = "";
      let finish: "stop" | "length" | null = null;
      const usage = new UsageTally();
      for await (const chunk of chunks) {
        if (chunk.type === "text") text += chunk.delta;
        else if (chunk.type === "usage") usage.add(chunk.inputTokens, chunk.outputTokens);
        else finish = chunk.finishReason;
      }
      if (finish === null) throw new Error("the engine ended the completion without a finish");
      return c.json(textCompletion(identity, text, finish, usage.toJSON()));
    } finally {
      release();
    }
  });
}
