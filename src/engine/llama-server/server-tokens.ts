// Token counts for the context budget from the running llama-server itself: its tokenizer
// (/tokenize), its chat template (/apply-template, which renders `tools` the way a chat request
// would), and the context a slot really has (/props). See docs/engines.md.
import type { Logger } from "pino";
import type { ChatMessage } from "../../shared/conversation/chat-message.js";
import type { ToolSpec } from "../../shared/conversation/tool-spec.js";
import { toOpenAiMessages, toOpenAiTools } from "../openai/openai-request.js";
import { callServer, errorMessageOf, type ServerEndpoint } from "./server-http.js";

const TIMEOUT_MS = 10_000;
/** The probe the embedded engine renders too: tools are what a prompt with them adds to one without. */
const PROBE = [
  { role: "system", content: "" },
  { role: "user", content: "" },
];
/** Tool sets remembered (a turn offers the same tools as the last one, almost always). */
const TOOL_CACHE_SIZE = 8;

/** About 3.5 characters a token (the agent's estimate too): only when this llama-server build cannot count (no /tokenize). */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 3.5);

export class ServerTokens {
  private readonly toolCounts = new Map<string, number>();
  private warned = false;

  constructor(private readonly logger: Logger) {}

  /** Tokens `text` takes, as the server tokenizes it (special-token text counted as plain text, as the embedded engine does). */
  async count(endpoint: ServerEndpoint, text: string, signal?: AbortSignal): Promise<number> {
    if (text === "") return 0;
    const tokens = await this.tokenize(endpoint, text, false, signal);
    return tokens ?? estimateTokens(text);
  }

  /**
   * What offering `tools` adds to a prompt under the model's chat template: the probe rendered by
   * /apply-template with and without them, both tokenized. A build without /apply-template (or
   * whose template cannot take tools) is charged the tokens of the tools' JSON, the text every
   * template that supports tools puts into the prompt, give or take its framing.
   */
  async toolTokens(endpoint: ServerEndpoint, tools: readonly ToolSpec[], signal?: AbortSignal): Promise<number> {
    if (tools.length === 0) return 0;
    const openAiTools = toOpenAiTools(tools);
    const key = JSON.stringify(openAiTools);
    const known = this.toolCounts.get(key);
    if (known !== undefined) return known;
    const [bare, offered] = await Promise.all([this.rendered(endpoint, undefined, signal), this.rendered(endpoint, openAiTools, signal)]);
    let count: number;
    // Rendered as a chat request is (the same code path): a template that drops tools costs nothing.
    if (bare !== null && offered !== null) {
      const [bareTokens, offeredTokens] = await Promise.all([this.tokenize(endpoint, bare, true, signal), this.tokenize(endpoint, offered, true, signal)]);
      count = bareTokens !== null && offeredTokens !== null ? Math.max(0, offeredTokens - bareTokens) : estimateTokens(offered) - estimateTokens(bare);
    } else {
      this.warnOnce("this llama-server cannot render its chat template (/apply-template): tool schemas are counted as their JSON text");
      count = await this.count(endpoint, key, signal);
    }
    if (this.toolCounts.size >= TOOL_CACHE_SIZE) this.toolCounts.delete(this.toolCounts.keys().next().value as string);
    this.toolCounts.set(key, count);
    return count;
  }

  /**
   * The whole prompt a chat request would evaluate: the messages and tools rendered by the
   * server's chat template (/apply-template) and tokenized as the server does (special tokens
   * parsed, BOS added). Null where this build cannot render or tokenize.
   */
  async promptTokens(endpoint: ServerEndpoint, messages: readonly ChatMessage[], tools: readonly ToolSpec[], signal?: AbortSignal): Promise<number | null> {
    const answer = await callServer(endpoint, "/apply-template", {
      method: "POST",
      json: { messages: toOpenAiMessages(messages), ...(tools.length === 0 ? {} : { tools: toOpenAiTools(tools) }) },
      timeoutMs: TIMEOUT_MS,
      ...(signal ? { signal } : {}),
    });
    const prompt = (answer.body as { prompt?: unknown } | null)?.prompt;
    if (answer.status !== 200 || typeof prompt !== "string") return null;
    return this.tokenize(endpoint, prompt, true, signal, true);
  }

  /** A slot's context (llama-server divides `ctx_size` among its `parallel` slots), or null when /props does not say. */
  async slotContext(endpoint: ServerEndpoint, signal?: AbortSignal): Promise<number | null> {
    const answer = await callServer(endpoint, "/props", { timeoutMs: TIMEOUT_MS, ...(signal ? { signal } : {}) });
    const settings = (answer.body as { default_generation_settings?: { n_ctx?: unknown } } | null)?.default_generation_settings;
    const nCtx = answer.status === 200 ? settings?.n_ctx : undefined;
    return typeof nCtx === "number" && Number.isInteger(nCtx) && nCtx > 0 ? nCtx : null;
  }

  private async tokenize(endpoint: ServerEndpoint, content: string, parseSpecial: boolean, signal?: AbortSignal, addSpecial = false): Promise<number | null> {
    const answer = await callServer(endpoint, "/tokenize", {
      method: "POST",
      json: { content, add_special: addSpecial, parse_special: parseSpecial },
      timeoutMs: TIMEOUT_MS,
      ...(signal ? { signal } : {}),
    });
    const tokens = (answer.body as { tokens?: unknown } | null)?.tokens;
    if (answer.status === 200 && Array.isArray(tokens)) return tokens.length;
    this.warnOnce(`/tokenize answered ${answer.status} (${errorMessageOf(answer.body)}): tokens are estimated at 3.5 characters each`);
    return null;
  }

  private async rendered(endpoint: ServerEndpoint, tools: unknown[] | undefined, signal?: AbortSignal): Promise<string | null> {
    const answer = await callServer(endpoint, "/apply-template", {
      method: "POST",
      json: { messages: PROBE, ...(tools === undefined ? {} : { tools }) },
      timeoutMs: TIMEOUT_MS,
      ...(signal ? { signal } : {}),
    });
    const prompt = (answer.body as { prompt?: unknown } | null)?.prompt;
    return answer.status === 200 && typeof prompt === "string" ? prompt : null;
  }

  private warnOnce(message: string): void {
    if (this.warned) return;
    this.warned = true;
    this.logger.warn(message);
  }
}
