import { globToRegExp } from "../shared/glob-pattern.js";
import type { ToolDescriptor } from "./tool-types.js";

/**
 * `agents.*.tools` entries: exact names or globs (`*` any run of characters, `?` one character,
 * everything else literal) matched against the exposed name. An entry with a `/` is
 * server-scoped: `<server glob>/<tool glob>`, e.g. `files/*` (every tool of server `files`) or
 * `files/write_*`; its tool part matches the tool's name on its server or its exposed name.
 * Exposed names never contain `/` (they are sanitized), so the two forms cannot be confused.
 */

type Matcher = (tool: ToolDescriptor) => boolean;

function compile(pattern: string): Matcher {
  const slash = pattern.indexOf("/");
  if (slash === -1) {
    const name = globToRegExp(pattern);
    return (tool) => name.test(tool.name);
  }
  // Split at the first `/`: MCP tool names may contain `/`, config server names should not.
  const server = globToRegExp(pattern.slice(0, slash));
  const toolPart = globToRegExp(pattern.slice(slash + 1));
  return (tool) => server.test(tool.server) && (toolPart.test(tool.remoteName) || toolPart.test(tool.name));
}

export interface ToolMatch {
  /** Matching tools, in the provider's order (config order, then list order), each once. */
  tools: ToolDescriptor[];
  /** Entries that matched nothing: usually a typo, worth a warning where the agent is set up. */
  unmatched: string[];
}

export function matchTools(tools: readonly ToolDescriptor[], patterns: readonly string[]): ToolMatch {
  const matchers = patterns.map((pattern) => ({ pattern, test: compile(pattern), hits: 0 }));
  const selected = tools.filter((tool) => {
    let keep = false;
    for (const matcher of matchers) {
      if (matcher.test(tool)) {
        matcher.hits++;
        keep = true;
      }
    }
    return keep;
  });
  return { tools: selected, unmatched: matchers.filter((m) => m.hits === 0).map((m) => m.pattern) };
}
