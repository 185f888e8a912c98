import path from "node:path";
import { LineCounter, parseDocument } from "yaml";
import type { z } from "zod";
import { RuntimeError } from "../shared/runtime-error.js";
import { describeValue, formatProblem, type ConfigProblem } from "./config-problem.js";
import { substituteEnv } from "./env-substitute.js";
import { resolveConfigPaths } from "./resolve-paths.js";
import { closestMatch } from "../shared/closest-match.js";
import { describeAccepted, keysAt, schemaAt, valueAt } from "./accepted-values.js";
import { expandServerIssues } from "./server-union-issues.js";
import { configSchema, type Config } from "./schema.js";
import { lineOfPath } from "./yaml-locator.js";
import { readConfigFile, type ConfigFile, type ConfigState, type LocateOptions } from "./read-config-file.js";

export { locateConfig, readConfigFile, type ConfigFile, type ConfigSource, type ConfigState, type LocateOptions } from "./read-config-file.js";

/** Never throws for a bad or missing file: the state says what is wrong, so servers can still start. */
export async function loadConfig(options: LocateOptions = {}): Promise<ConfigState> {
  const env = options.env ?? process.env;
  const file = await readConfigFile({ ...options, env });
  return file.status === "read" ? parseConfigFile(file, env) : file;
}

/** The state of a config file already read. */
export function parseConfigFile(file: ConfigFile & { status: "read" }, env: Readonly<Record<string, string | undefined>>): ConfigState {
  const result = parseConfigText(file.text, env, path.dirname(file.path));
  const { path: filePath, source } = file;
  return result.ok ? { status: "loaded", path: filePath, source, config: result.config } : { status: "invalid", path: filePath, source, problems: result.problems };
}

export type ParseResult = { ok: true; config: Config } | { ok: false; problems: ConfigProblem[] };

export function parseConfigText(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  baseDir: string,
): ParseResult {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      problems: doc.errors.map((error) => ({
        path: "",
        message: `YAML syntax: ${error.message.split("\n")[0] ?? error.message}`,
        ...(error.linePos ? { line: error.linePos[0].line } : {}),
      })),
    };
  }
  const envProblems = substituteEnv(doc, env, lineCounter);
  if (envProblems.length > 0) return { ok: false, problems: envProblems };

  // toJS resolves aliases: an alias to no anchor, or an alias bomb (yaml's maxAliasCount), throws here.
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (error) {
    return { ok: false, problems: [{ path: "", message: `YAML: ${(error as Error).message.split("\n")[0] ?? "cannot be read"}` }] };
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = expandServerIssues(parsed.error.issues, (at) => at.length === 3 && at[0] === "mcp" && at[1] === "servers", (at) => valueAt(raw, at));
    const problems = issues.flatMap((issue) => toProblems(issue, raw, doc, lineCounter));
    // In file order, so the user can fix them top to bottom.
    problems.sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER));
    return { ok: false, problems };
  }
  return { ok: true, config: resolveConfigPaths(parsed.data, baseDir) };
}

function toProblems(
  issue: z.core.$ZodIssue,
  raw: unknown,
  doc: ReturnType<typeof parseDocument>,
  lineCounter: LineCounter,
): ConfigProblem[] {
  const locate = (segments: readonly PropertyKey[]): Pick<ConfigProblem, "line"> => {
    const line = lineOfPath(doc, segments, lineCounter);
    return line === undefined ? {} : { line };
  };
  if (issue.code === "unrecognized_keys") {
    const known = keysAt(configSchema, issue.path);
    return issue.keys.map((key) => {
      const hint = closestMatch(key, known);
      return {
        path: [...issue.path, key].map(String).join("."),
        message: `unknown key${hint === undefined ? " (check the spelling" : ` (did you mean "${hint}"?`}; accepted here: ${known.join(", ")})`,
        ...locate([...issue.path, key]),
      };
    });
  }
  const found = describeValue(valueAt(raw, issue.path));
  // zod says "Invalid input" for a union and "Too small: ..." for one of its branches; say what is accepted.
  const accepted = ["invalid_union", "invalid_type", "too_small", "too_big", "invalid_value"].includes(issue.code) ? describeAccepted(schemaAt(configSchema, issue.path)) : undefined;
  const message = accepted === undefined ? issue.message : `must be ${accepted}`;
  return [
    {
      path: issue.path.map(String).join("."),
      message: found === undefined && issue.code === "invalid_type" ? `is required: ${message}` : message,
      ...(found === undefined ? {} : { found }),
      ...locate(issue.path),
    },
  ];
}

/** For methods that cannot run without a valid config. */
export function requireConfig(state: ConfigState): Config {
  if (state.status === "loaded") return state.config;
  if (state.status === "missing") {
    throw new RuntimeError("config_missing", `No config file at ${state.path}. Create one (see config.example.yaml) or pass --config FILE or set LOCAL_AI_CONFIG.`, {
      details: { path: state.path },
    });
  }
  throw new RuntimeError("config_invalid", `Config ${state.path} is invalid:\n${state.problems.map((p) => `  ${formatProblem(path.basename(state.path), p)}`).join("\n")}`, {
    details: { path: state.path, problems: state.problems },
  });
}
