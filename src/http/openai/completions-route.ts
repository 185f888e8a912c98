import { randomBytes } from "node:crypto";
import type { Hono } from "hono";
import type { CompletionChunk, CompletionRequest } from "../../engine/completion-types.js";
import type { Engine } from "../../engine/engine.js";
import { HttpError } from "../http-error.js";
import type { HttpDeps, ModelAccess } from "../http-deps.js";
import type { TurnServing } from "../responder/turn-responder.js";
import type { KeyScope } from "../keys/key-scope.js";
import { readJson } from "../request/read-json.js";
import { requestKeyScope } from "../request/request-key.js";
import { requestLogger, requestRecord, type RequestRecord } from "../request/request-record.js";
import { startRequestWork } from "../request/request-work.js";
import type { ModelResolver } from "../resolve-model.js";
import { resolveServedModel } from "../turn/resolve-served-model.js";
import { streamCompletion } from "./completion-stream.js";
import { parseCompletionsRequest, type CompletionsRequest } from "./completions-schema.js";
import { textCompletion, UsageTally, type TextCompletionIdentity } from "./text-completion.js";

/** A completions request resolved: the engine that completes, and what to ask it. */
interface ResolvedCompletion {
  body: CompletionsRequest;
  complete: NonNullable<Engine["complete"]>;
  identity: TextCompletionIdentity;
  completion: Omit<CompletionRequest, "signal">;
}

/**
 * POST /v1/completions: plain text completion for autocomplete clients, on the model behind the
 * named agent (or a model named directly). No chat template, no tools, no agent loop, no session.
 */
export function registerCompletionsRoute(app: Hono, deps: HttpDeps, resolver: ModelResolver, models: ModelAccess, serving: TurnServing): void {
  app.post("/v1/completions", async (c) => {
    const record = requestRecord(c);
    const resolved = await resolveCompletion(await readJson(c), resolver, models, requestKeyScope(c), record);
    // The client going away (or shutdown) stops generation at once and frees the sequence.
    const work = startRequestWork({ requestSignal: c.req.raw.signal, shutdownSignal: serving.shutdownSignal, inFlight: serving.inFlight, logger: requestLogger(c, deps.logger) });
    const chunks = counted(resolved.complete({ ...resolved.completion, signal: work.controller.signal }), record);
    if (resolved.body.stream) {
      return streamCompletion({
        chunks, identity: resolved.identity, includeUsage: resolved.body.includeUsage, controller: work.controller, release: work.finish,
        keepAliveMs: serving.stream.keepAliveMs,
        maxPendingBytes: serving.stream.maxPendingBytes,
        logger: requestLogger(c, deps.logger).child({ model: resolved.identity.model, endpoint: "completions" }),
        requestId: record?.id,
      });
    }
    try {
      return c.json(await completionJson(chunks, resolved.identity));
    } finally {
      work.finish();
    }
  });
}

/** The generation's first text and usage also reach the request's record (metrics, access log). */
function counted(chunks: AsyncIterable<CompletionChunk>, record: RequestRecord | undefined): AsyncIterable<CompletionChunk> {
  if (record === undefined) return chunks;
  return {
    async *[Symbol.asyncIterator]() {
      for await (const chunk of chunks) {
        if (chunk.type === "text" && chunk.delta !== "") record.firstToken();
        else if (chunk.type === "usage") record.addTokens({ prompt: chunk.inputTokens, cached: 0, generated: chunk.outputTokens });
        yield chunk;
      }
    },
  };
}

async function resolveCompletion(raw: unknown, resolver: ModelResolver, models: ModelAccess, scope: KeyScope, record: RequestRecord | undefined): Promise<ResolvedCompletion> {
  const body = parseCompletionsRequest(raw);
  const resolved = await resolveServedModel(resolver, models, body.model, record, models.names);
  scope.assertModel(resolved);
  const { id, modelName } = resolved;
  const engine = await models.engine(modelName);
  const complete = engine.complete?.bind(engine);
  if (complete === undefined) {
    throw new HttpError("completions_not_supported", `Model "${modelName}" (engine ${engine.kind}) cannot do text completion`, "model");
  }
  const identity: TextCompletionIdentity = { id: `cmpl-${randomBytes(12).toString("hex")}`, created: Math.floor(Date.now() / 1000), model: id };
  return { body, complete, identity, completion: body.completion };
}

async function completionJson(chunks: AsyncIterable<CompletionChunk>, identity: TextCompletionIdentity): Promise<Record<string, unknown>> {
  let text = "";
  let finish: "stop" | "length" | null = null;
  const usage = new UsageTally();
  for await (const chunk of chunks) {
    if (chunk.type === "text") text += chunk.delta;
    else if (chunk.type === "usage") usage.add(chunk.inputTokens, chunk.outputTokens);
    else finish = chunk.finishReason;
  }
  if (finish === null) throw new Error("the engine ended the completion without a finish");
  return textCompletion(identity, text, finish, usage.toJSON());
}
