import { readFile } from "node:fs/promises";
import path from "node:path";
import { Document, LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import { RuntimeError } from "../shared/runtime-error.js";
import { describeValue, formatProblem, type ConfigProblem } from "./config-problem.js";
import { substituteEnv } from "./env-substitute.js";
import { isRemoteServer } from "./mcp-server-kind.js";
import { mcpRemoteServerSchema, mcpServerSchema, REMOTE_TYPE_NAMES, type Config, type McpServerEntry } from "./schema.js";
import { expandServerIssues } from "./server-union-issues.js";
import { lineOfPath } from "./yaml-locator.js";

/**
 * `--mcp-config F`: MCP servers from a separate YAML or JSON file (docs/tools.md). Accepted:
 * - ours, strict like config.yaml: `{servers: {...}}` or `{mcp: {servers: {...}}}` (a whole
 *   config.yaml works too: its other sections are ignored here);
 * - the common `{"mcpServers": {"name": {...}}}` shape that other MCP hosts use (Claude Desktop,
 *   Cursor, LM Studio): `{"command", "args", "env"}` for a stdio server, `{"url", "headers"}` (with
 *   `type` `http`/`streamable-http`/`sse`; `serverUrl` read as `url`) for a remote one. Unknown
 *   per-server keys (`autoApprove`...) are ignored, `disabled: true` skips the server, and a
 *   transport we do not speak (`type: "ws"`) is skipped with a reason.
 * `${NAME}` is substituted as in config.yaml; a relative `cwd` (default: the file's folder)
 * resolves against the file's folder.
 */

export interface SkippedServer {
  server: string;
  reason: string;
}

export type McpConfigResult =
  | { ok: true; path: string; servers: Record<string, McpServerEntry>; skipped: SkippedServer[] }
  | { ok: false; path: string; problems: ConfigProblem[] };

type Parsed = { ok: true; servers: Record<string, McpServerEntry>; skipped: SkippedServer[] } | { ok: false; problems: ConfigProblem[] };

const MAIN_SECTIONS = new Set(["app", "stdio", "llama", "agents", "http"]);
const STDIO_KEYS = Object.keys(mcpServerSchema.shape);
const REMOTE_KEYS = Object.keys(mcpRemoteServerSchema.in.shape);
const SERVER_KEYS = [...new Set([...STDIO_KEYS, ...REMOTE_KEYS])];
const entrySchema = z.union([mcpServerSchema, mcpRemoteServerSchema]);
const serversSchema = z.record(z.string().min(1), entrySchema);

export async function loadMcpConfig(file: string, env: Readonly<Record<string, string | undefined>> = process.env): Promise<McpConfigResult> {
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = await readFile(absolute, "utf8");
  } catch (error) {
    return { ok: false, path: absolute, problems: [{ path: "", message: `cannot read the file: ${(error as Error).message}` }] };
  }
  return { path: absolute, ...parseMcpConfigText(text, env, path.dirname(absolute)) };
}

export function parseMcpConfigText(text: string, env: Readonly<Record<string, string | undefined>>, baseDir: string): Parsed {
  const lineCounter = new LineCounter();
  let doc: Document = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // Valid JSON that YAML rejects (tab indentation): take the JSON, without line numbers.
    const json = tryJson(text);
    if (json === undefined) {
      return { ok: false, problems: doc.errors.map((e) => ({ path: "", message: `syntax: ${e.message.split("\n")[0] ?? e.message}`, ...(e.linePos ? { line: e.linePos[0].line } : {}) })) };
    }
    doc = new Document(json);
  }
  const before: unknown = doc.toJS();
  const envProblems = substituteEnv(doc, env, lineCounter).filter((problem) => envMatters(before, problem.path));
  if (envProblems.length > 0) return { ok: false, problems: envProblems };
  const raw: unknown = doc.toJS();
  const locate = (segments: readonly PropertyKey[]): number | undefined => lineOfPath(doc, segments, lineCounter);
  const result = readShape(raw, locate);
  if (!result.ok) {
    // In file order, as config.yaml's problems are, so the user can fix them top to bottom.
    return { ok: false, problems: result.problems.sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER)) };
  }
  const servers = Object.fromEntries(
    Object.entries(result.servers).map(([name, server]) => [name, resolveServerPaths(server, baseDir)]),
  );
  return { ok: true, servers, skipped: result.skipped };
}

function resolveServerPaths(server: McpServerEntry, baseDir: string): McpServerEntry {
  if (!isRemoteServer(server)) return { ...server, cwd: path.resolve(baseDir, server.cwd ?? ".") };
  const secret = server.oauth?.client_secret_file;
  return secret === undefined || secret === null ? server : { ...server, oauth: { ...server.oauth!, client_secret_file: path.resolve(baseDir, secret) } };
}

/** An unset `${VAR}` in a disabled server or an ignored key of another host must not fail the file. */
function envMatters(raw: unknown, keyPath: string): boolean {
  if (!isObject(raw) || !("mcpServers" in raw)) return true;
  const [top, server, key] = keyPath.split(".");
  if (top !== "mcpServers" || server === undefined) return true;
  const entry = isObject(raw.mcpServers) ? raw.mcpServers[server] : undefined;
  if (isObject(entry) && entry.disabled === true) return false;
  return key === undefined || SERVER_KEYS.includes(key);
}

type Locate = (segments: readonly PropertyKey[]) => number | undefined;

function readShape(raw: unknown, locate: Locate): Parsed {
  if (!isObject(raw)) return { ok: false, problems: [{ path: "", message: "expected an object with mcpServers, servers or mcp.servers" }] };
  if ("mcpServers" in raw) return readCommonShape(raw.mcpServers, locate);
  if ("mcp" in raw) {
    const unknown = Object.keys(raw).filter((key) => key !== "mcp" && !MAIN_SECTIONS.has(key));
    if (unknown.length > 0) return { ok: false, problems: unknownKeys([], unknown, locate) };
    const parsed = z.strictObject({ servers: serversSchema.default({}) }).safeParse(raw.mcp ?? {});
    return parsed.success ? { ok: true, servers: parsed.data.servers, skipped: [] } : { ok: false, problems: toProblems(parsed.error, ["mcp"], raw.mcp, locate) };
  }
  if ("servers" in raw) {
    const parsed = z.strictObject({ servers: serversSchema }).safeParse(raw);
    return parsed.success ? { ok: true, servers: parsed.data.servers, skipped: [] } : { ok: false, problems: toProblems(parsed.error, [], raw, locate) };
  }
  return { ok: false, problems: [{ path: "", message: "no MCP servers found: expected a mcpServers, servers or mcp.servers key", found: describeValue(Object.keys(raw)) ?? "" }] };
}

function readCommonShape(entries: unknown, locate: Locate): Parsed {
  if (!isObject(entries)) return { ok: false, problems: [{ path: "mcpServers", message: "expected an object of servers", ...lineOf(locate, ["mcpServers"]) }] };
  const servers: Record<string, McpServerEntry> = {};
  const skipped: SkippedServer[] = [];
  const problems: ConfigProblem[] = [];
  for (const [name, entry] of Object.entries(entries)) {
    if (isObject(entry) && entry.disabled === true) {
      skipped.push({ server: name, reason: "disabled" });
      continue;
    }
    const remote = isObject(entry) && isRemoteEntry(entry);
    if (remote && entry.type !== undefined && !(REMOTE_TYPE_NAMES as unknown[]).includes(entry.type)) {
      skipped.push({ server: name, reason: `transport ${JSON.stringify(entry.type)} is not supported (stdio, http and sse are)` });
      continue;
    }
    // Other hosts' keys (autoApprove, alwaysAllow...) mean nothing here: keep only ours.
    const keys = remote ? REMOTE_KEYS : STDIO_KEYS;
    const source = remote && entry.url === undefined ? { ...entry, url: entry.serverUrl } : entry;
    const picked = isObject(source) ? Object.fromEntries(Object.entries(source).filter(([key]) => keys.includes(key))) : entry;
    const parsed = (remote ? mcpRemoteServerSchema : mcpServerSchema).safeParse(picked);
    if (parsed.success) servers[name] = parsed.data;
    else problems.push(...toProblems(parsed.error, ["mcpServers", name], picked, locate));
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, servers, skipped };
}

/** No command, and a `url` (Windsurf: `serverUrl`) or a `type` other than stdio. */
function isRemoteEntry(entry: Record<string, unknown>): boolean {
  return entry.command === undefined && (entry.url !== undefined || entry.serverUrl !== undefined || (entry.type !== undefined && entry.type !== "stdio"));
}

function toProblems(error: z.ZodError, prefix: readonly PropertyKey[], raw: unknown, locate: Locate): ConfigProblem[] {
  const isServer = (at: readonly PropertyKey[]): boolean => at.length === 2 && at[0] === "servers";
  return expandServerIssues(error.issues, isServer, (at) => valueAt(raw, at)).flatMap((issue) => {
    const segments = [...prefix, ...issue.path];
    if (issue.code === "unrecognized_keys") return unknownKeys(segments, issue.keys, locate);
    const found = describeValue(valueAt(raw, issue.path));
    const message = found === undefined && issue.code === "invalid_type" ? `is required: ${issue.message}` : issue.message;
    return [{ path: segments.map(String).join("."), message, ...(found === undefined ? {} : { found }), ...lineOf(locate, segments) }];
  });
}

function unknownKeys(prefix: readonly PropertyKey[], keys: readonly string[], locate: Locate): ConfigProblem[] {
  return keys.map((key) => ({ path: [...prefix, key].map(String).join("."), message: "unknown key (check the spelling; see docs/tools.md)", ...lineOf(locate, [...prefix, key]) }));
}

function lineOf(locate: Locate, segments: readonly PropertyKey[]): Pick<ConfigProblem, "line"> {
  const line = locate(segments);
  return line === undefined ? {} : { line };
}

function valueAt(root: unknown, segments: readonly PropertyKey[]): unknown {
  let value = root;
  for (const segment of segments) {
    if (!isObject(value) && !Array.isArray(value)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The servers of `--mcp-config` added to the config's own: a server named in both takes the
 * file's definition (in the config's position); new ones come after, in the file's order. Order
 * matters: it decides which server keeps a clashing tool name.
 */
export function mergeMcpConfig(config: Config, servers: Record<string, McpServerEntry>): Config {
  return { ...config, mcp: { ...config.mcp, servers: { ...config.mcp.servers, ...servers } } };
}

/** For a front door that cannot start without its --mcp-config. */
export function mcpConfigError(result: Extract<McpConfigResult, { ok: false }>): RuntimeError {
  const lines = result.problems.map((problem) => `  ${formatProblem(path.basename(result.path), problem)}`);
  return new RuntimeError("config_invalid", `MCP config ${result.path} is invalid:\n${lines.join("\n")}`, {
    details: { path: result.path, problems: result.problems },
  });
}
