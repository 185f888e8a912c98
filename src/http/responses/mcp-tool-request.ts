import { z } from "zod";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { McpRemoteServerConfig } from "../../tools/mcp/mcp-server-spec.js";
import type { ToolEntry } from "./responses-tools.js";

/** The config key that lets a request name an MCP server for this server to connect to. */
export const ALLOW_REQUEST_MCP_KEY = "http.allow_request_mcp";

/** Bound on one call of a request's MCP tool (the server's own connect and list are bounded apart). */
const CALL_TIMEOUT_MS = 60_000;

/** One `{"type": "mcp"}` tool of a request, ready for the MCP client. */
export interface RequestMcpServer {
  label: string;
  /** Where the request gave it (`tools[2]`), for messages. */
  param: string;
  config: McpRemoteServerConfig;
  /** The tools offered (by their name on the server); null: all. */
  allowed: ReadonlySet<string> | null;
  /** Whether a call of this tool (its name on the server) waits for an `mcp_approval_response`. */
  requiresApproval: (name: string) => boolean;
}

const names = z.array(z.string().min(1));
const filter = z.strictObject({ tool_names: names.optional(), read_only: z.boolean().optional() });

const mcpTool = z
  .object({
    type: z.literal("mcp"),
    server_label: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "a label of 1-64 letters, digits, _ or -"),
    server_url: z.url({ protocol: /^https?$/ }).optional(),
    connector_id: z.string().optional(),
    headers: z.record(z.string(), z.string()).nullish(),
    authorization: z.string().min(1).optional(),
    allowed_tools: z.union([names, filter]).nullish(),
    require_approval: z.union([z.enum(["always", "never"]), z.strictObject({ always: filter.optional(), never: filter.optional() })]).nullish(),
    server_description: z.string().optional(),
  })
  .loose();

type McpTool = z.output<typeof mcpTool>;

const refuse = (param: string, message: string): never => {
  throw new RuntimeError("invalid_request", `${param}: ${message}`, { details: { param } });
};

/**
 * The request's `mcp` tools. Refused (400 naming `tools[i]` and the config key, before anything
 * connects) unless `http.allow_request_mcp` is true: such a tool makes this server open a
 * connection to a URL the client chose.
 */
export function requestMcpServers(entries: readonly ToolEntry[], allowed: boolean): RequestMcpServer[] {
  const servers: RequestMcpServer[] = [];
  for (const { raw, param } of entries) {
    if (raw.type !== "mcp") continue;
    if (!allowed) {
      refuse(param, `mcp tools are disabled on this server: it would connect to a URL the request names. Set ${ALLOW_REQUEST_MCP_KEY}: true in the config to allow them`);
    }
    const parsed = mcpTool.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      refuse([param, ...(issue?.path ?? []).map(String)].join("."), issue?.message ?? "invalid mcp tool");
    }
    const tool = parsed.data!;
    if (servers.some((server) => server.label === tool.server_label)) refuse(`${param}.server_label`, `the server_label "${tool.server_label}" is given twice`);
    servers.push(toServer(tool, param));
  }
  return servers;
}

function toServer(tool: McpTool, param: string): RequestMcpServer {
  if (tool.connector_id !== undefined) refuse(`${param}.connector_id`, "connectors are not supported by this server; give server_url");
  if (tool.server_url === undefined) refuse(`${param}.server_url`, "required (the URL of a Streamable HTTP MCP server)");
  const allowedTools = tool.allowed_tools ?? null;
  if (allowedTools !== null && !Array.isArray(allowedTools) && allowedTools.read_only !== undefined) refuse(`${param}.allowed_tools.read_only`, "read_only filters are not supported by this server; name the tools in tool_names");
  const allowed = allowedTools === null ? null : new Set(Array.isArray(allowedTools) ? allowedTools : (allowedTools.tool_names ?? []));
  return {
    label: tool.server_label,
    param,
    config: {
      transport: "http",
      url: tool.server_url!,
      headers: { ...(tool.headers ?? {}), ...(tool.authorization === undefined ? {} : { Authorization: `Bearer ${tool.authorization}` }) },
      // Decided per tool by requiresApproval, once the server has listed them.
      requires_approval: false,
      // A request's server never uses the logins `local-ai mcp login` stored: the client sends its own token.
      oauth: null,
      timeout_ms: CALL_TIMEOUT_MS,
    },
    allowed,
    requiresApproval: approvalRule(tool.require_approval ?? "always", `${param}.require_approval`),
  };
}

/**
 * OpenAI's rule: approval unless said otherwise ("always" is the default). A filter object: a
 * tool named under `never` runs without approval, one under `always` waits for it; a tool named
 * under neither waits, unless only `always` was given (then the list is what needs approval).
 */
function approvalRule(setting: NonNullable<McpTool["require_approval"]>, param: string): (name: string) => boolean {
  if (setting === "always") return () => true;
  if (setting === "never") return () => false;
  for (const key of ["always", "never"] as const) {
    if (setting[key]?.read_only !== undefined) refuse(`${param}.${key}.read_only`, "read_only filters are not supported by this server; name the tools in tool_names");
  }
  const always = new Set(setting.always?.tool_names ?? []);
  const never = new Set(setting.never?.tool_names ?? []);
  const onlyAlways = setting.always !== undefined && setting.never === undefined;
  return (name) => (always.has(name) ? true : never.has(name) ? false : !onlyAlways);
}
