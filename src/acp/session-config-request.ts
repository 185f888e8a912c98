import type { SetSessionConfigOptionRequest, SetSessionConfigOptionResponse } from "@agentclientprotocol/sdk";
import type { Logger } from "pino";
import { toRuntimeError } from "../shared/runtime-error.js";
import { ACP_USER, type AcpConnectionState } from "./acp-connection-state.js";
import type { AcpCore } from "./acp-deps.js";
import type { AcpSession } from "./acp-session.js";
import { applyOption, defaultChoice, metaWithChoice, sessionOptions, type SessionChoice, type SessionOptions } from "./session-config.js";

/** The editor advertised `session.configOptions.boolean`: thinking is offered as a boolean (else a select). */
export function takesBooleans(state: AcpConnectionState): boolean {
  const configOptions = state.clientCapabilities.session?.configOptions;
  return configOptions?.boolean !== undefined && configOptions.boolean !== null;
}

/**
 * `session/set_config_option`: the session's agent/model or thinking changes for the next
 * prompts (a running one keeps what it started with, and the answer says so in `_meta`); stored
 * with the session when it is stored. Answers the full options as they are now.
 */
export async function setConfigOption(state: AcpConnectionState, params: SetSessionConfigOptionRequest): Promise<SetSessionConfigOptionResponse> {
  const session = state.sessions.get(params.sessionId);
  const core = await state.deps.core();
  const booleans = takesBooleans(state);
  const current = await sessionOptions(core.models, session.choice, booleans);
  const choice = await applyOption(core.models, current, params.configId, params.value);
  const offered = await choose(core, session, choice, booleans, state.logger);
  const log = state.logger.child({ session_id: session.id });
  log.info({ option: params.configId, value: params.value, agent: offered.choice.agent, model: offered.runsOn, thinking: offered.choice.thinking, busy: session.busy }, "ACP session option set");
  if (!session.busy) return { configOptions: offered.options };
  const message = "A prompt is running: it finishes with the earlier setting; the change applies from the next prompt.";
  return { configOptions: offered.options, _meta: { "local-ai": { appliesFrom: "next_prompt", message } } };
}

/**
 * Before a prompt: the choice as the options offer it now. A downloaded model whose file is gone
 * falls back to the default agent, and the editor is told with a `config_option_update`.
 */
export async function currentOptions(state: AcpConnectionState, core: AcpCore, session: AcpSession): Promise<SessionOptions> {
  const booleans = takesBooleans(state);
  const offered = await sessionOptions(core.models, session.choice, booleans);
  if (offered.fellBack === null) return offered;
  return fallBack(state, core, session, `The session's model choice ${offered.fellBack}`);
}

/**
 * A prompt whose model could not load (missing file, too large for this machine, a plan error) on
 * a model other than the default: the session goes back to the default agent for the next prompts,
 * and the editor's picker follows (`config_option_update`). The failed prompt still answers its error.
 */
export async function fallBackAfterFailure(state: AcpConnectionState, core: AcpCore, session: AcpSession, error: unknown): Promise<void> {
  const { code, message } = toRuntimeError(error);
  if (code !== "model_missing" && code !== "model_too_large" && code !== "model_plan_error") return;
  const fallback = defaultChoice(core.models);
  if (session.choice.agent === fallback.agent && session.choice.model === null) return;
  await fallBack(state, core, session, `The model did not load (${message}); back to the default agent ${fallback.agent ?? ""}`);
}

async function fallBack(state: AcpConnectionState, core: AcpCore, session: AcpSession, why: string): Promise<SessionOptions> {
  const log = state.logger.child({ session_id: session.id });
  const fallback = { ...defaultChoice(core.models), thinking: session.choice.thinking };
  const offered = await choose(core, session, fallback, takesBooleans(state), log);
  log.warn({ agent: offered.choice.agent }, why);
  session.updates.send({ sessionUpdate: "config_option_update", configOptions: offered.options });
  if (state.clientCapabilities.session?.notices !== undefined && state.clientCapabilities.session.notices !== null) {
    session.updates.send({ sessionUpdate: "notice", severity: "warning", title: why });
  }
  return offered;
}

/** The session takes the choice now, and keeps it in its stored meta (a session not stored yet stores it with its first prompt). */
async function choose(core: AcpCore, session: AcpSession, wanted: SessionChoice, booleans: boolean, log: Logger): Promise<SessionOptions> {
  const offered = await sessionOptions(core.models, wanted, booleans);
  session.choice = offered.choice;
  try {
    const meta = await core.catalog.readMeta(ACP_USER, session.id);
    if (meta !== null) await core.catalog.writeMeta(ACP_USER, session.id, metaWithChoice(meta, offered.choice));
  } catch (error) {
    // The session runs with it; only a later load would not see it.
    log.warn({ err: error }, "could not store the session's option");
  }
  return offered;
}
