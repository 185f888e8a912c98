import type { LlamaModel } from "node-llama-cpp";
import type { Config, ModelConfig } from "../../config/schema.js";
import type { GenerateRequest } from "../chat-types.js";
import type { ToolSpec } from "../../shared/conversation/tool-spec.js";
import { driverOf } from "../drivers/engine-drivers.js";
import { promptTokensFor } from "../llama/prompt-tokens.js";
import { checkGgufFile } from "../gguf/check-gguf-file.js";
import type { LlamaLoader } from "../llama/llama-loader.js";

/** One agent's offer of tools to its model, to be weighed against that model's context. */
export interface AgentToolOffer {
  agent: string;
  model: string;
  systemPrompt: string;
  maxTokens: number;
  tools: ToolSpec[];
}

/** How much of a conversation's context one agent's tool schemas take. */
export interface ToolSchemaShare {
  agent: string;
  model: string;
  tools: number;
  tool_tokens: number;
  system_tokens: number;
  /** The context one conversation has: ctx_size (embedded, capped at the trained context), a slot's share (llama-server). */
  window: number;
  /** Kept for the reply, as the context budget keeps it: max_tokens, at most a quarter of the window. */
  reply_reserve: number;
  /** `tokenizer`: the GGUF's own tokenizer and chat template (node-llama-cpp); `estimate`: about 3.5 characters a token. */
  counted: "tokenizer" | "estimate";
  /** `over_half`: the schemas take more than half the window; `no_room`: every turn of the agent is context_overflow. */
  verdict: "ok" | "over_half" | "no_room";
}

/** What a chat template adds around each message (as the context budget counts it). */
const PER_MESSAGE_OVERHEAD = 8;
const PROBE: GenerateRequest = { messages: [{ role: "system", content: "" }, { role: "user", content: "" }], temperature: 0, maxTokens: 1 };

const estimate = (text: string): number => Math.ceil(text.length / 3.5);

/**
 * Weighs each agent's tool schemas against its model's context, the way the context budget does
 * at run time: GGUF models (embedded, llama-server) load their vocabulary only (no weights) and
 * render the probe prompt with and without the tools through node-llama-cpp's chat wrapper (for
 * llama-server, whose own Jinja renderer decides at run time, this is the same template through
 * node-llama-cpp: close, not exact); `openai` models are estimated. `windowOf` overrides a model's
 * window (plan passes the context it decided).
 */
export async function measureToolSchemas(
  config: Config,
  offers: readonly AgentToolOffer[],
  options: { llama: LlamaLoader; windowOf?: (model: string) => number | undefined; signal?: AbortSignal },
): Promise<ToolSchemaShare[]> {
  const shares: ToolSchemaShare[] = [];
  const byModel = new Map<string, AgentToolOffer[]>();
  for (const offer of offers) if (offer.tools.length > 0 && offer.model in config.llama.models) byModel.set(offer.model, [...(byModel.get(offer.model) ?? []), offer]);
  // One vocabulary per GGUF file (resolving a chat wrapper takes node-llama-cpp seconds of CPU).
  const vocabularies = new Map<string, Promise<Vocabulary | null>>();
  try {
    for (const [name, group] of byModel) {
      options.signal?.throwIfAborted();
      const model = config.llama.models[name] as ModelConfig;
      const local = driverOf(model).local;
      const path = local === null ? null : model.path;
      if (path !== null && !vocabularies.has(path)) vocabularies.set(path, vocabularyOf(path, options.llama).catch(() => null));
      const counter = path === null ? null : await (vocabularies.get(path) as Promise<Vocabulary | null>);
      // A vocabulary-only load may not know the trained context: 0 means unknown.
      const trained = counter !== null && counter.model.trainContextSize > 0 ? counter.model.trainContextSize : Number.POSITIVE_INFINITY;
      const configured = local?.context === "shared" ? Math.floor(model.ctx_size / model.parallel) : Math.min(model.ctx_size, trained);
      const window = options.windowOf?.(name) ?? configured;
      for (const offer of group) {
        const toolTokens = counter === null ? estimate(JSON.stringify(offer.tools)) : counter.toolTokens(offer.tools);
        const systemTokens = PER_MESSAGE_OVERHEAD + (counter === null ? estimate(offer.systemPrompt) : counter.model.tokenize(offer.systemPrompt).length);
        const reserve = Math.min(offer.maxTokens, Math.floor(window / 4));
        const verdict = systemTokens + toolTokens >= window - reserve ? "no_room" : toolTokens > window / 2 ? "over_half" : "ok";
        shares.push({
          agent: offer.agent,
          model: name,
          tools: offer.tools.length,
          tool_tokens: toolTokens,
          system_tokens: systemTokens,
          window,
          reply_reserve: reserve,
          counted: counter === null ? "estimate" : "tokenizer",
          verdict,
        });
      }
    }
  } finally {
    for (const vocabulary of vocabularies.values()) await (await vocabulary)?.model.dispose();
  }
  return shares;
}

/** The finding in words, e.g. "12 tools take 2,310 tokens of model default's 4,096-token context (56%)". */
export function describeToolShare(share: ToolSchemaShare): string {
  const percent = Math.round((share.tool_tokens / share.window) * 100);
  const how = share.counted === "estimate" ? "about " : "";
  const base = `${share.tools} tool${share.tools === 1 ? " takes" : "s take"} ${how}${share.tool_tokens} tokens of model ${share.model}'s ${share.window}-token context (${percent}%)`;
  if (share.verdict === "no_room") return `${base}: with the system prompt (${share.system_tokens}) and ${share.reply_reserve} kept for the reply nothing is left, every turn is context_overflow`;
  if (share.verdict === "over_half") return `${base}: more than half the context goes to tool schemas before any conversation`;
  return base;
}

/** The fix for a share that is not ok. */
export function toolShareFix(share: ToolSchemaShare): string {
  return `narrow agents.${share.agent}.tools to the tools it needs (names, globs or server/tool), or raise llama.models.${share.model}.ctx_size`;
}

interface Vocabulary {
  model: LlamaModel;
  toolTokens: (tools: ToolSpec[]) => number;
}

async function vocabularyOf(path: string, loader: LlamaLoader): Promise<Vocabulary> {
  // Checked before llama.cpp reads it: a header that lies would have it read without end (doctor's
  // tool check loads every configured model's vocabulary, planned or not).
  await checkGgufFile(path);
  const { module, llama } = await loader();
  const model = await llama.loadModel({ modelPath: path, vocabOnly: true });
  const wrapper = module.resolveChatWrapper(model);
  const bare = promptTokensFor(model, wrapper, PROBE, undefined)?.length ?? 0;
  return {
    model,
    // The same difference the embedded engine's toolTokens takes; a template that cannot be rendered ahead: the JSON's tokens.
    toolTokens: (tools) => {
      const offered = promptTokensFor(model, wrapper, PROBE, tools)?.length;
      return offered === undefined ? model.tokenize(JSON.stringify(tools)).length : Math.max(0, offered - bare);
    },
  };
}
