import { parsePromptArguments } from "../agent/mcp-input.js";

/** What one line typed at the chat prompt asks for. */
export type ChatCommand =
  | { kind: "message"; text: string }
  | { kind: "empty" }
  | { kind: "new" }
  | { kind: "session"; id?: string }
  | { kind: "agent"; name?: string }
  | { kind: "resume" }
  | { kind: "usage" }
  | { kind: "prompts" }
  | { kind: "help" }
  | { kind: "exit" }
  /** `/<server>:<prompt> arg=value ...`: an MCP prompt opens the turn. */
  | { kind: "prompt"; server: string; name: string; arguments: Record<string, string> }
  /** A `/<server>:<prompt>` whose arguments are not `name=value` pairs. */
  | { kind: "bad_prompt"; problem: string }
  | { kind: "unknown"; name: string };

const NO_ARGUMENT = { new: "new", resume: "resume", usage: "usage", prompts: "prompts", help: "help", exit: "exit", quit: "exit", "?": "help" } as const;

/**
 * A line starting with `/` is a command; `//text` sends `/text` as a message. Anything else
 * (surrounding blanks kept, except a line of blanks) is a message for the agent.
 */
export function parseChatCommand(line: string): ChatCommand {
  const trimmed = line.trim();
  if (trimmed === "") return { kind: "empty" };
  if (!trimmed.startsWith("/")) return { kind: "message", text: line };
  if (trimmed.startsWith("//")) return { kind: "message", text: trimmed.slice(1) };
  const [word = "", ...rest] = trimmed.slice(1).split(/\s+/);
  const argument = rest.join(" ");
  const name = word.toLowerCase();
  if (name in NO_ARGUMENT) return { kind: NO_ARGUMENT[name as keyof typeof NO_ARGUMENT] };
  if (name === "session") return argument === "" ? { kind: "session" } : { kind: "session", id: argument };
  if (name === "agent") return argument === "" ? { kind: "agent" } : { kind: "agent", name: argument };
  const colon = word.indexOf(":");
  if (colon > 0 && colon < word.length - 1) return promptCommand(word.slice(0, colon), word.slice(colon + 1), trimmed.slice(1 + word.length).trim());
  return { kind: "unknown", name: word };
}

function promptCommand(server: string, name: string, text: string): ChatCommand {
  const parsed = parsePromptArguments(text);
  if (typeof parsed === "string") return { kind: "bad_prompt", problem: `/${server}:${name}: ${parsed}` };
  return { kind: "prompt", server, name, arguments: parsed };
}

/**
 * A message's `@server:uri` mentions of running MCP servers' resources, as input parts: the text
 * around them, and a resource part each. Null: nothing to attach (the message goes as typed).
 */
export function resourceMentions(text: string, servers: readonly string[]): Array<{ type: "text"; text: string } | { type: "resource"; server: string; uri: string }> | null {
  const parts: Array<{ type: "text"; text: string } | { type: "resource"; server: string; uri: string }> = [];
  const mention = /(^|\s)@([A-Za-z0-9_.-]+):(\S+)/g;
  let last = 0;
  for (const match of text.matchAll(mention)) {
    const server = match[2] as string;
    if (!servers.includes(server)) continue;
    const start = (match.index ?? 0) + (match[1] as string).length;
    if (start > last) parts.push({ type: "text", text: text.slice(last, start) });
    parts.push({ type: "resource", server, uri: match[3] as string });
    last = start + 2 + server.length + (match[3] as string).length;
  }
  if (parts.length === 0) return null;
  if (last < text.length) parts.push({ type: "text", text: text.slice(last) });
  return parts;
}

export const CHAT_HELP = [
  "/new            start a new session (a fresh conversation)",
  "/session [ID]   show the session id, or switch to session ID (its history continues)",
  "/agent [NAME]   show the agents, or switch to agent NAME",
  "/resume         continue this session's interrupted or paused turn",
  "/usage          tokens used in this chat so far",
  "/prompts        the MCP servers' prompts",
  "/SERVER:PROMPT [arg=value ...]   start a turn with an MCP prompt",
  "@SERVER:URI     (in a message) attach an MCP resource",
  "/help           this list",
  "/exit           leave (also Ctrl-D at the prompt, or Ctrl-C twice)",
  "//text          send a message that starts with /",
  "Ctrl-C during a turn cancels it.",
].join("\n");
