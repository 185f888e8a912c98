import type { SessionConfigOption, SessionConfigSelectGroup, SessionConfigSelectOption } from "@agentclientprotocol/sdk";
import { RuntimeError } from "../shared/runtime-error.js";
import type { SessionMeta } from "../store/store-types.js";
import type { AcpModels } from "./acp-deps.js";

/** What the editor chose for a session: stored with it (session.json), applied from the next prompt. */
export interface SessionChoice {
  /** The agent that runs the prompts; null: none is configured (the prompt says so). */
  agent: string | null;
  /** A downloaded model (served on demand) the agent runs on instead of its own; null: the agent's model. */
  model: string | null;
  /** False: thinking off (where the model thinks). */
  thinking: boolean;
}

/** The option ids, as the editor sends them back in `session/set_config_option`. */
const MODEL_OPTION = "model";
const THINKING_OPTION = "thinking";
/** The values of the thinking option as a select (for an editor without boolean options). */
const THINKING_ON = "on";
const THINKING_OFF = "off";

/** One value of the model option: an agent (on its model) or a downloaded model (the default agent on it). */
interface ModelValue {
  value: string;
  name: string;
  description: string;
  agent: string;
  model: string | null;
  /** The `llama.models` name the prompts run on. */
  runsOn: string;
}

/** The options of a session as offered now, with the choice they show (fallen back when what it named is gone). */
export interface SessionOptions {
  options: SessionConfigOption[];
  choice: SessionChoice;
  /** The model the prompts run on; null without agents. */
  runsOn: string | null;
  /** Whether that model thinks (the thinking option is offered). */
  thinks: boolean;
  /** Why the choice fell back to the default agent (the value it named is no longer offered), or null. */
  fellBack: string | null;
}

export function defaultChoice(models: AcpModels): SessionChoice {
  return { agent: models.agents()[0]?.name ?? null, model: null, thinking: true };
}

/**
 * The session's config options: `model` (category `model`) lists the configured agents, each as
 * `agent (model)`, then the downloaded models served on demand in a group of their own; `thinking`
 * (category `thought_level`) only where the chosen model thinks, a boolean for an editor that
 * advertised boolean options, else a select of `on` / `off`.
 */
export async function sessionOptions(models: AcpModels, wanted: SessionChoice, booleans: boolean): Promise<SessionOptions> {
  const values = await modelValues(models);
  const all = [...values.agents, ...values.downloaded];
  const first = values.agents[0];
  if (first === undefined) return { options: [], choice: { ...wanted, agent: null, model: null }, runsOn: null, thinks: false, fellBack: null };
  let current = all.find((value) => value.value === (wanted.model ?? wanted.agent));
  let fellBack: string | null = null;
  if (current === undefined) {
    fellBack = `"${wanted.model ?? wanted.agent ?? ""}" is no longer offered (not in the config, or the file is gone): back to the default agent ${first.agent}`;
    current = first;
  }
  const choice: SessionChoice = { agent: current.agent, model: current.model, thinking: wanted.thinking };
  const thinks = await models.thinks(current.runsOn);
  const select = (value: ModelValue): SessionConfigSelectOption => ({ value: value.value, name: value.name, description: value.description });
  const choices: SessionConfigSelectOption[] | SessionConfigSelectGroup[] =
    values.downloaded.length === 0
      ? values.agents.map(select)
      : [
          { group: "agents", name: "Agents", options: values.agents.map(select) },
          { group: "downloaded", name: "Downloaded models", options: values.downloaded.map(select) },
        ];
  const options: SessionConfigOption[] = [
    { id: MODEL_OPTION, name: "Model", description: "The agent (and its model) that answers the next prompts", category: "model", type: "select", currentValue: current.value, options: choices },
  ];
  if (thinks) options.push(thinkingOption(choice.thinking, booleans));
  return { options, choice, runsOn: current.runsOn, thinks, fellBack };
}

/**
 * `session/set_config_option`'s value applied to a choice; unknown ids and values are
 * invalid_params naming the valid ones (the options as offered now).
 */
export async function applyOption(models: AcpModels, current: SessionOptions, configId: string, value: string | boolean): Promise<SessionChoice> {
  const ids = current.options.map((option) => option.id);
  if (!ids.includes(configId)) {
    throw new RuntimeError("invalid_params", `Unknown config option "${configId.slice(0, 64)}"; this session offers: ${ids.join(", ") || "none"}`, { details: { param: "configId", valid: ids } });
  }
  if (configId === THINKING_OPTION) {
    const thinking = value === true || value === THINKING_ON ? true : value === false || value === THINKING_OFF ? false : null;
    if (thinking === null) throw badValue(configId, value, [THINKING_ON, THINKING_OFF, "true", "false"]);
    return { ...current.choice, thinking };
  }
  const values = await modelValues(models);
  const valid = [...values.agents, ...values.downloaded];
  const picked = typeof value === "string" ? valid.find((entry) => entry.value === value) : undefined;
  if (picked === undefined) throw badValue(configId, value, valid.map((entry) => entry.value));
  return { ...current.choice, agent: picked.agent, model: picked.model };
}

/** The choice as stored in the session's meta (defaults left out). */
export function storedChoice(choice: SessionChoice): { agent?: string; model?: string; thinking?: boolean } {
  return { ...(choice.agent === null ? {} : { agent: choice.agent }), ...(choice.model === null ? {} : { model: choice.model }), ...(choice.thinking ? {} : { thinking: false }) };
}

async function modelValues(models: AcpModels): Promise<{ agents: ModelValue[]; downloaded: ModelValue[] }> {
  const agents = models.agents().map((agent): ModelValue => ({
    value: agent.name,
    name: `${agent.name} (${agent.model})`,
    description: `agent ${agent.name} on model ${agent.model}`,
    agent: agent.name,
    model: null,
    runsOn: agent.model,
  }));
  const fallback = agents[0];
  if (fallback === undefined) return { agents, downloaded: [] };
  const taken = new Set(agents.map((agent) => agent.value));
  // As serve-http serves them: the default agent, on the downloaded file.
  const downloaded = (await models.downloaded())
    .filter((name) => !taken.has(name))
    .map((name): ModelValue => ({ value: name, name, description: `downloaded model ${name}, with agent ${fallback.agent}`, agent: fallback.agent, model: name, runsOn: name }));
  return { agents, downloaded };
}

function thinkingOption(thinking: boolean, booleans: boolean): SessionConfigOption {
  const base = { id: THINKING_OPTION, name: "Thinking", description: "Whether the model thinks before it answers (from the next prompt)", category: "thought_level" };
  if (booleans) return { ...base, type: "boolean", currentValue: thinking };
  return {
    ...base,
    type: "select",
    currentValue: thinking ? THINKING_ON : THINKING_OFF,
    options: [
      { value: THINKING_ON, name: "On" },
      { value: THINKING_OFF, name: "Off" },
    ],
  };
}

function badValue(configId: string, value: unknown, valid: string[]): RuntimeError {
  const shown = typeof value === "string" ? `"${value.slice(0, 64)}"` : JSON.stringify(value);
  return new RuntimeError("invalid_params", `Unknown value ${shown} for config option "${configId}"; valid values: ${valid.join(", ")}`, { details: { param: "value", valid } });
}

/** The choice stored in a session's meta (what it lacks: the default). */
export function choiceOfMeta(meta: SessionMeta | null, models: AcpModels): SessionChoice {
  const fallback = defaultChoice(models);
  if (meta === null) return fallback;
  return { agent: meta.agent ?? fallback.agent, model: meta.model ?? null, thinking: meta.thinking ?? true };
}

/** The meta with this choice in place of the one it had (defaults left out). */
export function metaWithChoice(meta: SessionMeta, choice: SessionChoice): SessionMeta {
  const { agent: _agent, model: _model, thinking: _thinking, ...rest } = meta;
  return { ...rest, ...storedChoice(choice) };
}
