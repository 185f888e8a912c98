/**
 * Names exposed to the model. Model tool-calling APIs (OpenAI, llama.cpp grammars) accept only
 * `^[a-zA-Z0-9_-]{1,64}$`, and the agent needs one name per tool across all MCP servers, so the
 * rule is (see docs/tools.md):
 *
 * 1. every name is sanitized: other characters become `_`, at most 64 characters;
 * 2. servers are taken in config order, tools in the order their server lists them: the first
 *    to claim a name keeps it;
 * 3. a later tool whose name is taken gets `<server>_<tool>`, then `<server>_<tool>_2`, `_3`...
 *
 * The rule depends only on config order and the servers' lists, never on which server answered
 * first, so the same config always yields the same names.
 */

export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_LENGTH = 64;

export function sanitizeToolName(name: string): string {
  const replaced = name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, MAX_LENGTH);
  return replaced === "" ? "tool" : replaced;
}

export interface RemoteTool {
  server: string;
  remoteName: string;
}

/** Exposed name for each tool, in input order (which must be config order, then list order). */
export function assignToolNames(tools: readonly RemoteTool[]): string[] {
  const taken = new Set<string>();
  return tools.map((tool) => {
    const name = pickName(tool, taken);
    taken.add(name);
    return name;
  });
}

function pickName(tool: RemoteTool, taken: ReadonlySet<string>): string {
  const bare = sanitizeToolName(tool.remoteName);
  if (!taken.has(bare)) return bare;
  const scoped = sanitizeToolName(`${tool.server}_${tool.remoteName}`);
  if (!taken.has(scoped)) return scoped;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    // Cut the stem, never the suffix, so a long name still gets a distinct one within 64.
    const candidate = `${scoped.slice(0, MAX_LENGTH - suffix.length)}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}
