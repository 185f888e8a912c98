import { readConfigFile, type ConfigState } from "../../config/read-config-file.js";

/** serve-stdio's config in two steps: what must be known before serving, and the full state. */
export interface StdioConfig {
  /**
   * Known before the first line is read: a missing or unreadable file, or a file that was parsed
   * first because it may set `stdio:` limits. null: the file is being parsed in the background
   * and the stdio defaults apply (they are what such a file parses to).
   */
  early: ConfigState | null;
  /** The full state (with --mcp-config applied): what config-backed methods wait for. */
  state: Promise<ConfigState>;
}

/**
 * A key that may be `stdio` (`stdio:`, `"stdio":`, `? stdio` + `:`), or an escape that could spell
 * it: then the file is parsed before serving. Conservative on purpose: a false alarm costs only
 * the old start-up time, a miss would serve with the wrong limits.
 */
const MAY_SET_STDIO = /stdio['"]?\s*:|\\[xuU]/;

/**
 * Parsing the config needs yaml and zod (~90 ms of imports at start). serve-stdio needs from the
 * config, before it answers `ping`, only the `stdio:` limits; so unless the file may set them, the
 * parse runs in the background and `ping`/`initialize` are answered meanwhile. Everything else is
 * unchanged: methods that need the config wait for `state` and answer config_missing /
 * config_invalid exactly as before, and a broken config never stops serve-stdio.
 */
export async function openStdioConfig(options: { config?: string | undefined; mcpConfig?: string | undefined }, deps: { env: Readonly<Record<string, string | undefined>>; cwd: string }): Promise<StdioConfig> {
  const file = await readConfigFile({ flag: options.config, env: deps.env, cwd: deps.cwd });
  // --mcp-config applies only to a loaded config, so a file that is not there needs no parsing.
  if (file.status !== "read") return { early: file, state: Promise.resolve(file) };
  const state = (async (): Promise<ConfigState> => {
    const [{ parseConfigFile }, { applyMcpConfig }] = await Promise.all([import("../../config/load-config.js"), import("../../config/apply-mcp-config.js")]);
    return applyMcpConfig(parseConfigFile(file, deps.env), options.mcpConfig, deps.env, deps.cwd);
  })();
  if (MAY_SET_STDIO.test(file.text)) return { early: await state, state };
  return { early: null, state };
}
