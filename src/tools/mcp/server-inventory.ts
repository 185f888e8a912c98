import type { Logger } from "../../logging/create-logger.js";
import { isLoginRequired } from "./oauth/login-required.js";
import type { McpAuth } from "./oauth/mcp-auth.js";
import { isRemoteServer, type McpServerSpec } from "./mcp-server-spec.js";
import { closeSession, errorText, listAllTools, openSession, type McpSession } from "./mcp-session.js";

/** One line of `local-ai mcp list` (`--json`: `{servers: [...]}`, docs/tools.md). */
export interface McpServerInventory {
  name: string;
  /** `http` or `sse` for a remote server (`sse` also after the automatic fallback), else `stdio`. */
  transport: "stdio" | "http" | "sse";
  state: "connected" | "needs_login" | "failed";
  reason?: string;
  tools: number;
  prompts: number;
  resources: number;
}

export interface InventoryDeps {
  logger: Logger;
  env: Readonly<Record<string, string | undefined>>;
  auth?: McpAuth;
  /** Bound on connecting to (or starting) one server and listing what it offers. */
  startTimeoutMs: number;
}

/**
 * Connects to every configured server once, in parallel, counts its tools, prompts and
 * resources, and disconnects: what `local-ai mcp list` shows. Never starts a login: a remote
 * server without a usable one is `needs_login`.
 */
export function inventoryServers(servers: Record<string, McpServerSpec>, deps: InventoryDeps): Promise<McpServerInventory[]> {
  return Promise.all(Object.entries(servers).map(([name, config]) => inventoryOne(name, config, deps)));
}

async function inventoryOne(name: string, config: McpServerSpec, deps: InventoryDeps): Promise<McpServerInventory> {
  const logger = deps.logger.child({ server: name });
  const base = { name, transport: isRemoteServer(config) ? config.transport : ("stdio" as const), tools: 0, prompts: 0, resources: 0 };
  let session: McpSession | undefined;
  try {
    session = await openSession(
      {
        server: name,
        config,
        env: deps.env,
        logger,
        startTimeoutMs: deps.startTimeoutMs,
        onClose: () => undefined,
        authProvider: isRemoteServer(config) ? deps.auth?.providerFor(name, config) : undefined,
      },
      () => undefined,
    );
    const kind = "transportKind" in session.transport ? (session.transport.transportKind as "http" | "sse") : base.transport;
    const capabilities = session.client.getServerCapabilities() ?? {};
    const tools = (await listAllTools(session, deps.startTimeoutMs, logger)).length;
    const prompts = capabilities.prompts === undefined ? 0 : await countPages((cursor) => session!.client.listPrompts(cursor, { timeout: deps.startTimeoutMs }).then((page) => ({ count: page.prompts.length, next: page.nextCursor })));
    const resources = capabilities.resources === undefined ? 0 : await countPages((cursor) => session!.client.listResources(cursor, { timeout: deps.startTimeoutMs }).then((page) => ({ count: page.resources.length, next: page.nextCursor })));
    return { ...base, transport: kind, state: "connected", tools, prompts, resources };
  } catch (error) {
    if (isLoginRequired(error)) return { ...base, state: "needs_login", reason: errorText(error) };
    return { ...base, state: "failed", reason: errorText(error) };
  } finally {
    if (session !== undefined) await closeSession(session, logger);
  }
}

/** Every page of a list method (a cursor seen twice ends it: a server that loops). */
async function countPages(page: (params: { cursor?: string }) => Promise<{ count: number; next: string | undefined }>): Promise<number> {
  let total = 0;
  let cursor: string | undefined;
  const seen = new Set<string>();
  do {
    const result = await page(cursor === undefined ? {} : { cursor });
    total += result.count;
    cursor = result.next;
    if (cursor !== undefined && seen.has(cursor)) break;
    if (cursor !== undefined) seen.add(cursor);
  } while (cursor !== undefined);
  return total;
}
