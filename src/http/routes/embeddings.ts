import type { Hono } from "hono";
import type { HttpDeps, ModelAccess } from "../http-deps.js";
import { embeddingList } from "../openai/embedding-list.js";
import { parseEmbeddingsRequest } from "../openai/embeddings-schema.js";
import { HttpError } from "../openai/errors.js";
import { readJson } from "../read-json.js";
import { requestAbort } from "../request-abort.js";
import { resolveModel } from "../resolve-model.js";

/** POST /v1/embeddings: vectors from the model behind the named agent (or a model named directly). */
export function registerEmbeddingsRoute(app: Hono, deps: HttpDeps, models: ModelAccess): void {
  app.post("/v1/embeddings", async (c) => {
    const body = parseEmbeddingsRequest(await readJson(c));
    const { id, modelName } = resolveModel(body.model, deps.agents, models.names);
    const description = models.describe(modelName);
    const engine = await models.engine(modelName);
    if (!description.capabilities.embeddings || engine.embed === undefined) {
      throw new HttpError(
        "embeddings_not_supported",
        `Model "${modelName}" (engine ${description.engine}) cannot embed: a llama-server model embeds only with "--embeddings" and "--pooling last" in llama.models.${modelName}.extra_args (llama.cpp builds that then refuse chat need a second model), or use a model with engine: embedded on the same GGUF file.`,
        "model",
      );
    }
    // The client going away (or shutdown) stops the work between inputs.
    const abort = requestAbort(c.req.raw.signal, deps.shutdownSignal);
    try {
      const result = await engine.embed({
        input: body.input,
        ...(body.dimensions === undefined ? {} : { dimensions: body.dimensions }),
        signal: abort.controller.signal,
      });
      return c.json(embeddingList({ model: id, vectors: result.vectors, promptTokens: result.promptTokens, encodingFormat: body.encodingFormat }));
    } finally {
      abort.dispose();
    }
  });
}
