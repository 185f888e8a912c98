import type { ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";
import { EDITOR_TOOL_NAMES } from "./editor-tools.js";
import { resolveInWorkspace } from "./workspace-path.js";

/** How an editor shows a tool call: a kind (its icon), a one-line title, and the files it touches. */
export interface ToolDisplay {
  title: string;
  kind: ToolKind;
  locations: ToolCallLocation[];
}

const TITLE_MAX = 100;

/** `cwd` resolves the editor tools' relative paths, so a location is the file the editor should show. */
export function toolDisplay(tool: string, args: unknown, cwd: string): ToolDisplay {
  const input = typeof args === "object" && args !== null ? (args as Record<string, unknown>) : {};
  const path = typeof input.path === "string" ? input.path : undefined;
  switch (tool) {
    case EDITOR_TOOL_NAMES.read:
      return { title: `Read ${path ?? "a file"}`, kind: "read", locations: locationOf(path, cwd, input.line) };
    case EDITOR_TOOL_NAMES.write:
      return { title: `Write ${path ?? "a file"}`, kind: "edit", locations: locationOf(path, cwd) };
    case EDITOR_TOOL_NAMES.run: {
      const args: unknown[] = Array.isArray(input.args) ? input.args : [];
      const command = [input.command, ...args].filter((part) => typeof part === "string").join(" ");
      return { title: clip(`Run ${command === "" ? "a command" : command}`), kind: "execute", locations: [] };
    }
    default:
      return { title: clip(`${tool} ${summary(input)}`.trim()), kind: kindByName(tool), locations: [] };
  }
}

/** MCP tools say nothing about what they do; their names usually do. */
function kindByName(tool: string): ToolKind {
  const name = tool.toLowerCase();
  if (/(^|_)(search|find|grep|query)/.test(name)) return "search";
  if (/(^|_)(read|get|list|view|show|cat)(_|$)/.test(name)) return "read";
  if (/(^|_)(write|edit|create|update|append|replace|patch|set)(_|$)/.test(name)) return "edit";
  if (/(^|_)(delete|remove|rm|unlink)(_|$)/.test(name)) return "delete";
  if (/(^|_)(move|rename|mv)(_|$)/.test(name)) return "move";
  if (/(^|_)(run|exec|execute|shell|command|bash)(_|$)/.test(name)) return "execute";
  if (/(^|_)(fetch|download|http|browse|url)(_|$)/.test(name)) return "fetch";
  if (/(^|_)(think|plan|reason)(_|$)/.test(name)) return "think";
  return "other";
}

function summary(input: Record<string, unknown>): string {
  const text = JSON.stringify(input);
  return text === "{}" ? "" : text;
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > TITLE_MAX ? `${line.slice(0, TITLE_MAX - 1)}…` : line;
}

function locationOf(path: string | undefined, cwd: string, line?: unknown): ToolCallLocation[] {
  if (path === undefined) return [];
  try {
    return [{ path: resolveInWorkspace(cwd, path), ...(typeof line === "number" ? { line } : {}) }];
  } catch {
    // A path outside the workspace is refused when the tool runs; there is nothing to show.
    return [];
  }
}
