/** What one line typed at the chat prompt asks for. */
export type ChatCommand =
  | { kind: "message"; text: string }
  | { kind: "empty" }
  | { kind: "new" }
  | { kind: "session"; id?: string }
  | { kind: "agent"; name?: string }
  | { kind: "resume" }
  | { kind: "usage" }
  | { kind: "help" }
  | { kind: "exit" }
  | { kind: "unknown"; name: string };

const NO_ARGUMENT = { new: "new", resume: "resume", usage: "usage", help: "help", exit: "exit", quit: "exit", "?": "help" } as const;

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
  return { kind: "unknown", name: word };
}

export const CHAT_HELP = [
  "/new            start a new session (a fresh conversation)",
  "/session [ID]   show the session id, or switch to session ID (its history continues)",
  "/agent [NAME]   show the agents, or switch to agent NAME",
  "/resume         continue this session's interrupted or paused turn",
  "/usage          tokens used in this chat so far",
  "/help           this list",
  "/exit           leave (also Ctrl-D at the prompt, or Ctrl-C twice)",
  "//text          send a message that starts with /",
  "Ctrl-C during a turn cancels it.",
].join("\n");
