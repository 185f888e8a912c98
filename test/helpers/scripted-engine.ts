import type { ChatMessage } from "../../src/shared/conversation/chat-message.js";
import type { EngineChunk, GenerateRequest } from "../../src/engine/chat-types.js";
import type { Engine, EngineHealth } from "../../src/engine/engine.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";

/** One model step of the script: fixed chunks, or chunks computed from what the model was sent. */
export type ScriptStep = EngineChunk[] | ((messages: ChatMessage[]) => EngineChunk[]);

/**
 * A test double of the Engine interface for AgentLoop logic: plays scripted steps in order,
 * `delayMs` between chunks, honouring abort like a real engine (nothing after the abort).
 */
export class ScriptedEngine implements Engine {
  readonly kind = "embedded";
  readonly capabilities = { images: false, requiredToolChoice: false };
  readonly requests: GenerateRequest[] = [];
  warmUps = 0;
  private next = 0;

  constructor(
    private readonly steps: ScriptStep[],
    private readonly delayMs = 0,
    readonly modelName = "scripted",
  ) {}

  async warmUp(): Promise<void> {
    this.warmUps++;
  }

  health(): EngineHealth {
    return { state: "ready", degradationTier: "NORMAL" };
  }

  async close(): Promise<void> {}

  generate(request: GenerateRequest): AsyncIterable<EngineChunk> {
    this.requests.push(structuredClone({ ...request, signal: undefined, onModelLoad: undefined, onPromptProgress: undefined }));
    const step = this.steps[this.next++];
    if (step === undefined) throw new Error(`the script has no step ${this.next - 1}`);
    const chunks = typeof step === "function" ? step(request.messages) : step;
    const delayMs = this.delayMs;
    return (async function* () {
      for (const chunk of chunks) {
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        if (request.signal?.aborted) throw new RuntimeError("cancelled", "Generation cancelled");
        yield chunk;
      }
    })();
  }
}

export const say = (text: string): EngineChunk[] => [
  { type: "text", delta: text },
  { type: "usage", inputTokens: 10, outputTokens: text.length },
  { type: "end", finishReason: "stop" },
];

export const callTool = (name: string, args: unknown, id = `call_${name}`): EngineChunk[] => [
  { type: "tool_call_start", index: 0, id, name },
  { type: "tool_call", index: 0, call: { id, name, arguments: typeof args === "string" ? args : JSON.stringify(args) } },
  { type: "usage", inputTokens: 10, outputTokens: 5 },
  { type: "end", finishReason: "tool_calls" },
];
