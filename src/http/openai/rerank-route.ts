import type { Hono } from "hono";
import type { Engine } from "../../engine/engine.js";
import { HttpError } from "../http-error.js";
import type { HttpDeps, ModelAccess } from "../http-deps.js";
import { readJson } from "../request/read-json.js";
import { requestAbort } from "../request/request-abort.js";
import { requestRecord } from "../request/request-record.js";
import { requestKeyScope } from "../request/request-key.js";
import type { ModelResolver } from "../resolve-model.js";
import { parseRerankRequest, rerankResponse } from "./rerank-schema.js";

/** POST /v1/rerank and /rerank (llama-server's, Jina's and Cohere's shape): relevance of documents to a query. */
export function registerRerankRoute(app: Hono, deps: HttpDeps, resolver: ModelResolver, models: ModelAccess): void {
  for (const path of ["/v1/rerank", "/rerank"]) {
    app.post(path, async (c) => {
      const body = parseRerankRequest(await readJson(c));
      const resolved = resolver.resolve(body.model, models.names);
      requestRecord(c)?.resolved(resolved.agent, resolved.modelName);
      requestKeyScope(c).assertModel(resolved);
      const { id, modelName } = resolved;
      const description = models.describe(modelName);
      const engine = await models.engine(modelName);
      const rerank: Engine["rerank"] = engine.rerank?.bind(engine);
      if (!description.capabilities.rerank || rerank === undefined) {
        throw new HttpError(
          "rerank_not_supported",
          `Model "${modelName}" (engine ${description.engine}) cannot rerank: set llama.models.${modelName}.rerank: true on a reranker GGUF (engine llama-server), or use engine: embedded with a reranker GGUF.`,
          "model",
        );
      }
      const abort = requestAbort(c.req.raw.signal, deps.shutdownSignal);
      try {
        const result = await rerank({ query: body.query, documents: body.documents, signal: abort.controller.signal });
        return c.json(rerankResponse(body, id, result.scores, result.promptTokens));
      } finally {
        abort.dispose();
      }
    });
  }
}
