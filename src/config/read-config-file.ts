import { readFile } from "node:fs/promises";
import path from "node:path";
import type { ConfigProblem } from "./config-problem.js";
import type { Config } from "./schema.js";

/**
 * Finding and reading the config file, without parsing it: no yaml, no zod. serve-stdio reads the
 * file first and parses it only when needed (see src/app/serve/stdio-config.ts), so a missing config
 * costs nothing at start. load-config.ts re-exports everything here.
 */

export type ConfigSource = "flag" | "env" | "default";

export type ConfigState =
  | { status: "loaded"; path: string; source: ConfigSource; config: Config }
  | { status: "missing"; path: string; source: ConfigSource }
  | { status: "invalid"; path: string; source: ConfigSource; problems: ConfigProblem[] };

export interface LocateOptions {
  /** `--config F` */
  flag?: string | undefined;
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
}

/** The file's text, or the state that says why there is none. */
export type ConfigFile = { status: "read"; path: string; source: ConfigSource; text: string } | Exclude<ConfigState, { status: "loaded" }>;

/** `--config F`, then `LOCAL_AI_CONFIG`, then `./config.yaml`. */
export function locateConfig(options: LocateOptions): { path: string; source: ConfigSource } {
  const cwd = options.cwd ?? process.cwd();
  if (options.flag !== undefined && options.flag !== "") return { path: path.resolve(cwd, options.flag), source: "flag" };
  const fromEnv = options.env?.LOCAL_AI_CONFIG;
  if (fromEnv !== undefined && fromEnv !== "") return { path: path.resolve(cwd, fromEnv), source: "env" };
  return { path: path.resolve(cwd, "config.yaml"), source: "default" };
}

/** Never throws: a missing file is `missing`, an unreadable one `invalid`. */
export async function readConfigFile(options: LocateOptions = {}): Promise<ConfigFile> {
  const env = options.env ?? process.env;
  const { path: file, source } = locateConfig({ ...options, env });
  try {
    return { status: "read", path: file, source, text: await readFile(file, "utf8") };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { status: "missing", path: file, source };
    const reason = (error as Error).message;
    return { status: "invalid", path: file, source, problems: [{ path: "", message: `cannot read the file: ${reason}` }] };
  }
}
