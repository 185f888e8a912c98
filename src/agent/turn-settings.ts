import type { AgentConfig, Config } from "../config/schema.js";
import type { ChatMessage } from "../shared/conversation/chat-message.js";
import type { SamplingOverrides } from "../shared/conversation/sampling-overrides.js";
import type { ToolSpec } from "../shared/conversation/tool-spec.js";
import type { ToolDescriptor } from "../tools/tool-types.js";
import type { Engine } from "../engine/engine.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { StepOptions } from "./model-step.js";

/** What the AgentLoop is given for sampling: the agent's config, overridden per request. */
export interface TurnSampling {
  temperature: number;
  maxTokens: number;
  seed: number | null;
  stepOptions: StepOptions;
  noTools: boolean;
}

export function resolveSampling(agent: AgentConfig, overrides: SamplingOverrides = {}): TurnSampling {
  const choice = overrides.toolChoice;
  const stepOptions: StepOptions = {};
  if (overrides.topP !== undefined) stepOptions.topP = overrides.topP;
  if (overrides.topK !== undefined) stepOptions.topK = overrides.topK;
  if (overrides.stop !== undefined) stepOptions.stop = overrides.stop;
  if (overrides.frequencyPenalty !== undefined) stepOptions.frequencyPenalty = overrides.frequencyPenalty;
  if (overrides.presencePenalty !== undefined) stepOptions.presencePenalty = overrides.presencePenalty;
  if (overrides.responseFormat !== undefined) stepOptions.responseFormat = overrides.responseFormat;
  if (choice !== undefined && choice !== "none") stepOptions.toolChoice = choice;
  if (overrides.parallelToolCalls !== undefined) stepOptions.parallelToolCalls = overrides.parallelToolCalls;
  if (overrides.reasoningEffort !== undefined) stepOptions.reasoningEffort = overrides.reasoningEffort;
  return {
    temperature: overrides.temperature ?? agent.temperature,
    maxTokens: overrides.maxTokens ?? agent.max_tokens,
    seed: overrides.seed ?? agent.seed,
    stepOptions,
    noTools: choice === "none",
  };
}

/**
 * Parts the model cannot take are refused before the turn starts (a 400 over HTTP), never
 * silently flattened: an image for an engine without image input names the message it is in.
 */
export function assertEngineAccepts(engine: Engine, messages: readonly ChatMessage[]): void {
  if (engine.capabilities.images) return;
  for (const [index, message] of messages.entries()) {
    if (message.role !== "user" || typeof message.content === "string") continue;
    const part = message.content.findIndex((p) => p.type === "image_url");
    if (part === -1) continue;
    const param = `messages[${index}].content[${part}]`;
    throw new RuntimeError("invalid_params", `${param}: model "${engine.modelName}" (engine ${engine.kind}) does not take image input`, { details: { param } });
  }
}

/** Warnings for requested controls this engine cannot enforce (never silently ignored). */
export function samplingWarnings(engine: Engine, overrides: SamplingOverrides = {}): string[] {
  const warnings: string[] = [];
  if (!engine.capabilities.requiredToolChoice && (overrides.toolChoice === "required" || typeof overrides.toolChoice === "object")) {
    warnings.push(`tool_choice ${JSON.stringify(overrides.toolChoice)} is not enforced by the ${engine.kind} engine: the model may still answer without calling a tool`);
  }
  if (engine.kind === "openai" && overrides.topK !== undefined) warnings.push("top_k is not sent by the openai engine (OpenAI-compatible servers differ on it): not applied");
  if (engine.kind === "embedded" && (overrides.reasoningEffort === "none" || overrides.reasoningEffort === "minimal")) {
    warnings.push(`reasoning effort "${overrides.reasoningEffort}" is not applied by the embedded engine (no thinking switch): a model that thinks still does`);
  }
  return warnings;
}

/** The AgentLoop's limits from `app:` (the same for every kind of turn). */
export function loopLimits(config: Config): { maxSteps: number; maxParseErrors: number; maxToolOutputBytes: number } {
  return { maxSteps: config.app.max_steps, maxParseErrors: config.app.max_parse_errors, maxToolOutputBytes: config.app.max_tool_output_bytes };
}

/** The agent's tools as the model is offered them. */
export function toolSpecsOf(descriptors: readonly ToolDescriptor[]): ToolSpec[] {
  return descriptors.map((d) => ({ name: d.name, ...(d.description === undefined ? {} : { description: d.description }), parameters: d.inputSchema }));
}
