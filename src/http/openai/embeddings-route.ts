import type { Hono } from "hono";
import type { Engine } from "../../engine/engine.js";
import { HttpError } from "../http-error.js";
import type { HttpDeps, ModelAccess } from "../http-deps.js";
import type { KeyScope } from "../keys/key-scope.js";
import { readJson } from "../request/read-json.js";
import { requestKeyScope } from "../request/request-key.js";
import { requestAbort } from "../request/request-abort.js";
import type { ModelResolver } from "../resolve-model.js";
import { requestRecord, type RequestRecord } from "../request/request-record.js";
import { resolveServedModel } from "../turn/resolve-served-model.js";
import { embeddingList } from "./embedding-list.js";
import { parseEmbeddingsRequest, type EmbeddingsRequest } from "./embeddings-schema.js";

/** POST /v1/embeddings: vectors from the model behind the named agent (or a model named directly). */
export function registerEmbeddingsRoute(app: Hono, deps: HttpDeps, resolver: ModelResolver, models: ModelAccess): void {
  app.post("/v1/embeddings", async (c) => {
    const record = requestRecord(c);
    const { body, id, embed } = await resolveEmbeddings(await readJson(c), resolver, models, requestKeyScope(c), record);
    // The client going away (or shutdown) stops the work between inputs.
    const abort = requestAbort(c.req.raw.signal, deps.shutdownSignal);
    try {
      const result = await embed({ input: body.input, ...(body.dimensions === undefined ? {} : { dimensions: body.dimensions }), signal: abort.controller.signal });
      record?.addTokens({ prompt: result.promptTokens, cached: 0, generated: 0 });
      return c.json(embeddingList({ model: id, vectors: result.vectors, promptTokens: result.promptTokens, encodingFormat: body.encodingFormat }));
    } finally {
      abort.dispose();
    }
  });
}

async function resolveEmbeddings(raw: unknown, resolver: ModelResolver, models: ModelAccess, scope: KeyScope, record: RequestRecord | undefined): Promise<{ body: EmbeddingsRequest; id: string; embed: NonNullable<Engine["embed"]> }> {
  const body = parseEmbeddingsRequest(raw);
  const resolved = await resolveServedModel(resolver, models, body.model, record, models.names);
  scope.assertModel(resolved);
  const { id, modelName } = resolved;
  const description = models.describe(modelName);
  const engine = await models.engine(modelName);
  const embed = engine.embed?.bind(engine);
  if (!description.capabilities.embeddings || embed === undefined) {
    throw new HttpError(
      "embeddings_not_supported",
      `Model "${modelName}" (engine ${description.engine}) cannot embed: a llama-server model embeds only with "--embeddings" and "--pooling last" in llama.models.${modelName}.extra_args (llama.cpp builds that then refuse chat need a second model), or use a model with engine: embedded on the same GGUF file.`,
      "model",
    );
  }
  return { body, id, embed };
}
