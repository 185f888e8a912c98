import type { AvailableCommand, ContentBlock } from "@agentclientprotocol/sdk";
import type { Logger } from "pino";
import { parsePromptArguments, parsePromptCommand, type PromptRef } from "../agent/mcp-input.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { AcpSession } from "./acp-session.js";

/**
 * MCP prompts as the editor's slash commands: `available_commands_update` lists each as
 * `<server>:<prompt>` (its arguments as the input hint), sent when the session's servers have
 * started, when a server announces a change (`prompts/list_changed`, or of its tools), and after
 * each turn when the list changed; a
 * prompt that is exactly `/<server>:<prompt> arg=value ...` runs that prompt.
 */
export function advertisePrompts(session: AcpSession, logger: Logger): Promise<void> {
  // One at a time: a slower, older listing must not be sent after a newer one.
  const next = session.advertising.then(() => sendPrompts(session, logger));
  session.advertising = next;
  return next;
}

async function sendPrompts(session: AcpSession, logger: Logger): Promise<void> {
  if (session.tools.prompts === undefined) return;
  try {
    const prompts = await session.tools.prompts();
    const commands = prompts.map((prompt): AvailableCommand => {
      const hint = prompt.arguments.map((arg) => (arg.required === true ? `${arg.name}=…` : `[${arg.name}=…]`)).join(" ");
      return { name: `${prompt.server}:${prompt.name}`, description: prompt.description ?? `MCP prompt of ${prompt.server}`, input: hint === "" ? null : { hint } };
    });
    const text = JSON.stringify(commands);
    // Nothing new to say (the first time, an empty list is not worth an update either).
    if (text === (session.advertised ?? "[]")) return;
    session.advertised = text;
    session.updates.send({ sessionUpdate: "available_commands_update", availableCommands: commands });
  } catch (error) {
    logger.warn({ err: error }, "could not list the MCP prompts for the editor's commands");
  }
}

/** The prompt a `/<server>:<prompt> ...` text runs, when the server is one of the session's; null: an ordinary prompt. */
export function promptCommandOf(blocks: readonly ContentBlock[], session: AcpSession): PromptRef | null {
  const only = blocks.length === 1 ? blocks[0] : undefined;
  if (only?.type !== "text") return null;
  const command = parsePromptCommand(only.text);
  if (command === null || session.tools.mcpServers?.().includes(command.server) !== true) return null;
  const args = parsePromptArguments(command.rest);
  if (typeof args === "string") throw new RuntimeError("invalid_params", `/${command.server}:${command.name}: ${args}`, { details: { param: "prompt[0]" } });
  return { server: command.server, name: command.name, arguments: args };
}
