import type { LlamaEmbeddingContext, LlamaModel, Token } from "node-llama-cpp";
import { abortError } from "../../shared/abort.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { EmbedRequest, EmbedResult } from "../embedding-types.js";
import { tokenizeSliced } from "../llama/sliced-tokenize.js";

export interface EmbedderOptions {
  /** Longest input in tokens; the embedding context is this big. */
  contextSize: number;
  threads: number;
}

/**
 * Embeddings from the already-loaded model: node-llama-cpp's embedding context is a second
 * llama.cpp context (embeddings mode) on the same weights, so the model file is loaded once.
 * It is created on the first request, reused, and disposed with the engine. It never touches the
 * chat sequences, so embedding does not wait for (or starve) chats; node-llama-cpp serialises
 * the inputs on its one sequence.
 */
export class EmbeddedEmbedder {
  private context: Promise<LlamaEmbeddingContext> | null = null;
  private disposed = false;

  constructor(
    private readonly model: LlamaModel,
    private readonly modelName: string,
    private readonly options: EmbedderOptions,
  ) {}

  get vectorSize(): number {
    return this.model.embeddingVectorSize;
  }

  async embed(request: EmbedRequest): Promise<EmbedResult> {
    const { signal } = request;
    const size = this.vectorSize;
    if (request.dimensions !== undefined && request.dimensions !== size) {
      // Truncating only works for models trained for it (Matryoshka); a GGUF does not say so.
      throw new RuntimeError("invalid_request", `dimensions: model "${this.modelName}" produces ${size}-dimensional vectors and cannot shorten them; omit dimensions or send ${size}`, {
        details: { param: "dimensions", openai_code: "unsupported_parameter" },
      });
    }
    const checked = request.input.map((input, index) => this.checkedInput(input, index));
    const context = await this.ensureContext();
    const most = Math.min(context.model.trainContextSize, this.options.contextSize) - 1;
    const tooLong = (index: number, length: number, over: boolean): RuntimeError =>
      new RuntimeError("invalid_request", `input[${index}] is ${over ? "more than " : ""}${length} tokens; model "${this.modelName}" embeds at most ${most}`, { details: { param: "input" } });
    // Texts tokenized as getEmbeddingFor would (no special-token text), in slices that yield and
    // stop past what the context holds: a multi-MiB input never holds the event loop.
    const inputs: Token[][] = [];
    for (const [index, input] of checked.entries()) {
      const tokens = typeof input === "string" ? await tokenizeSliced(this.model, input, { specialTokens: false, maxTokens: most, overLimit: () => tooLong(index, most, true), signal }) : input;
      if (tokens.length > most) throw tooLong(index, tokens.length, false);
      inputs.push(tokens);
    }
    const vectors: number[][] = [];
    for (const input of inputs) {
      if (signal?.aborted === true) throw new RuntimeError("cancelled", "Embedding cancelled", { cause: abortError(signal) });
      const embedding = await context.getEmbeddingFor(input);
      vectors.push(normalise(embedding.vector));
    }
    return { vectors, promptTokens: inputs.reduce((sum, input) => sum + input.length, 0) };
  }

  /** Token ids outside the vocabulary would read past llama.cpp's embedding table: refused here. */
  private checkedInput(input: string | number[], index: number): string | Token[] {
    if (typeof input === "string") return input;
    const vocabulary = vocabularySize(this.model);
    const bad = input.findIndex((token) => !Number.isInteger(token) || token < 0 || token >= vocabulary);
    if (bad !== -1) {
      throw new RuntimeError("invalid_request", `input[${index}][${bad}] is not a token id of model "${this.modelName}" (0-${vocabulary - 1})`, { details: { param: "input" } });
    }
    return input as Token[];
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const context = await this.context?.catch(() => null);
    this.context = null;
    await context?.dispose();
  }

  private ensureContext(): Promise<LlamaEmbeddingContext> {
    if (this.disposed) return Promise.reject(new RuntimeError("shutting_down", "The engine is closed"));
    this.context ??= this.model
      // batchSize = contextSize: an input is evaluated in one batch, whatever its length.
      .createEmbeddingContext({ contextSize: this.options.contextSize, batchSize: this.options.contextSize, threads: this.options.threads })
      .catch((error: unknown) => {
        this.context = null; // a failed creation (out of memory) may be retried
        throw new RuntimeError("engine_error", `Cannot create an embedding context for model "${this.modelName}": ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      });
    return this.context;
  }
}

/** Unit length, as OpenAI and llama-server return them: cosine similarity is then a dot product. */
function normalise(vector: readonly number[]): number[] {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const norm = Math.sqrt(sum);
  return norm === 0 ? Array.from(vector) : vector.map((value) => value / norm);
}

/** The vocabulary size from the GGUF metadata (node-llama-cpp has no accessor for it). */
function vocabularySize(model: LlamaModel): number {
  const tokens = (model.fileInfo.metadata as { tokenizer?: { ggml?: { tokens?: unknown } } }).tokenizer?.ggml?.tokens;
  return Array.isArray(tokens) ? tokens.length : 0;
}
