import type { LlamaModel, LlamaRankingContext } from "node-llama-cpp";
import { abortError } from "../../shared/abort.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { RerankRequest, RerankResult } from "../rerank-types.js";
import { tokenizeSliced } from "../llama/sliced-tokenize.js";

export interface RankerOptions {
  contextSize: number;
  threads: number;
}

/**
 * Rerank scores from the already-loaded model: node-llama-cpp's ranking context is a third
 * llama.cpp context (rank pooling) on the same weights, created on the first request and disposed
 * with the engine. Only a GGUF with a classification head (`cls` / `cls.output`) can rank; any
 * other model is refused before a context is made.
 */
export class EmbeddedRanker {
  private context: Promise<LlamaRankingContext> | null = null;
  private disposed = false;

  constructor(
    private readonly model: LlamaModel,
    private readonly modelName: string,
    private readonly options: RankerOptions,
  ) {}

  async rerank(request: RerankRequest): Promise<RerankResult> {
    const { signal } = request;
    if (!this.model.fileInsights.supportsRanking) {
      throw new RuntimeError("invalid_request", `Model "${this.modelName}" cannot rerank: its GGUF has no ranking head (a reranker GGUF has cls / cls.output tensors and rank pooling)`, {
        details: { param: "model", openai_code: "rerank_not_supported" },
      });
    }
    const context = await this.ensureContext();
    // Tokenized in slices that yield, and no further than the context could hold: a multi-MiB
    // query or document never holds the event loop.
    const most = this.options.contextSize - 1;
    const over = (param: string, what: string) => (): RuntimeError =>
      new RuntimeError("invalid_request", `${what} is more than ${most} tokens; model "${this.modelName}" ranks at most ${most}`, { details: { param } });
    const query = await tokenizeSliced(this.model, request.query, { specialTokens: false, maxTokens: most, overLimit: over("query", "query"), signal });
    const scores: number[] = [];
    let promptTokens = 0;
    for (const [index, document] of request.documents.entries()) {
      if (signal?.aborted === true) throw new RuntimeError("cancelled", "Rerank cancelled", { cause: abortError(signal) });
      const tokens = await tokenizeSliced(this.model, document, { specialTokens: false, maxTokens: most, overLimit: over("documents", `documents[${index}]`), signal });
      // Query, document and the separators: past the context, node-llama-cpp would throw mid-batch.
      const length = query.length + tokens.length + 4;
      if (length >= this.options.contextSize) {
        throw new RuntimeError("invalid_request", `documents[${index}] with the query is ${length} tokens; model "${this.modelName}" ranks at most ${this.options.contextSize - 1}`, {
          details: { param: "documents" },
        });
      }
      promptTokens += length;
      scores.push(await context.rank(query, tokens));
    }
    return { scores, promptTokens };
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const context = await this.context?.catch(() => null);
    this.context = null;
    await context?.dispose();
  }

  private ensureContext(): Promise<LlamaRankingContext> {
    if (this.disposed) return Promise.reject(new RuntimeError("shutting_down", "The engine is closed"));
    this.context ??= this.model
      .createRankingContext({ contextSize: this.options.contextSize, batchSize: this.options.contextSize, threads: this.options.threads })
      .catch((error: unknown) => {
        this.context = null; // a failed creation (out of memory) may be retried
        throw new RuntimeError("engine_error", `Cannot create a ranking context for model "${this.modelName}": ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      });
    return this.context;
  }
}
