import type { ModelConfig } from "../config/schema.js";

/**
 * What in a chat template shows that the model thinks before it answers: the `<think>` blocks of
 * Qwen 3, DeepSeek R1 and their kin, the `enable_thinking` switch, a `reasoning_content` field, or
 * gpt-oss's analysis channel.
 */
const THINKING_MARKERS = /<think>|<\/think>|enable_thinking|reasoning_content|<\|channel\|>analysis/;

/**
 * Whether a configured model thinks, from its file alone (nothing is loaded): a GGUF whose chat
 * template has a thinking part. An `openai` upstream is asked, not read: its server decides (true).
 * A file that is not there or does not parse: false (the model cannot run either).
 */
export async function modelThinks(model: ModelConfig, locate: () => Promise<string>): Promise<boolean> {
  if (model.engine === "openai") return true;
  try {
    const { readGgufFileInfo } = await import("node-llama-cpp");
    const info = await readGgufFileInfo(await locate(), { sourceType: "filesystem", readTensorInfo: false, logWarnings: false });
    const template: unknown = info.metadata.tokenizer?.chat_template;
    return typeof template === "string" && THINKING_MARKERS.test(template);
  } catch {
    return false;
  }
}
