// The warm-up check for a remote OpenAI-compatible server: one bounded GET {base_url}/models.
// It proves the server is reachable and accepts our key before the first user request, so a
// wrong base_url or key is reported at startup (and on /health), not mid-conversation.
import { NotFoundError } from "openai";
import type OpenAI from "openai";
import type { Logger } from "../../logging/create-logger.js";
import { toEngineError } from "./openai-errors.js";

export const MODELS_PROBE_TIMEOUT_MS = 5_000;

export interface ProbeModelsOptions {
  model: string;
  signal: AbortSignal;
  logger: Logger;
  timeoutMs?: number;
}

export interface ProbeResult {
  /** False when the server has no /models endpoint (accepted: some proxies only serve chat). */
  listed: boolean;
  /** Whether our model id appeared in the list (servers often list a file name or alias instead). */
  modelListed: boolean;
}

export async function probeModels(client: OpenAI, options: ProbeModelsOptions): Promise<ProbeResult> {
  const { model, signal, logger } = options;
  const context = { baseUrl: client.baseURL, model };
  try {
    // First page only: enough to prove reachability and auth without walking a huge catalogue.
    const page = await client.models.list({ signal, timeout: options.timeoutMs ?? MODELS_PROBE_TIMEOUT_MS });
    const ids = page.data.map((entry) => entry.id);
    const modelListed = ids.includes(model);
    if (!modelListed) {
      // Not fatal: llama-server lists the GGUF path or alias, Ollama tags differ... the first
      // generate reports model_missing if the server really does not know it.
      logger.warn({ baseUrl: context.baseUrl, model, listed: ids.slice(0, 20) }, "model not in the server's /models list; continuing");
    }
    return { listed: true, modelListed };
  } catch (err) {
    if (err instanceof NotFoundError && !signal.aborted) {
      logger.warn({ baseUrl: context.baseUrl }, "server has no /models endpoint (404); assuming it is reachable");
      return { listed: false, modelListed: false };
    }
    throw toEngineError(err, context, signal.aborted);
  }
}
