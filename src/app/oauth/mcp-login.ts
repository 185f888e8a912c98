import type { Logger } from "pino";
import { isRemoteServer } from "../../config/mcp-server-kind.js";
import type { Config } from "../../config/schema.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import { McpAuthFiles } from "../../store/mcp-auth-files.js";
import { McpAuth } from "../../tools/mcp/oauth/mcp-auth.js";
import { OAuthCallbackServer } from "./oauth-callback-server.js";

export interface McpLoginOptions {
  config: Config;
  server: string;
  logger: Logger;
  /** Shows the authorization URL (the CLI prints it and may open a browser). */
  showUrl: (url: URL) => void | Promise<void>;
  /** How long to wait for the browser's redirect. */
  timeoutMs: number;
  /** Ends the wait early (the front door that started the login is closing). */
  signal?: AbortSignal;
  /** The loopback port to wait on (default: the one the stored registration names, else any). */
  port?: number;
}

/**
 * `local-ai mcp login <server>` (docs/tools.md): the OAuth authorization-code flow with PKCE for
 * one remote server, run by the MCP SDK's auth(): discovery of the protected-resource and
 * authorization-server metadata, dynamic client registration (or the configured oauth.client_id),
 * the authorization URL, then the code from the redirect to 127.0.0.1:<port>/callback exchanged
 * for tokens. Any earlier tokens are dropped first, so a login always asks the user. Returns the
 * file the login is kept in.
 */
export async function mcpLogin(options: McpLoginOptions): Promise<{ file: string }> {
  const { config, server } = options;
  const entry = config.mcp.servers[server];
  if (entry === undefined) {
    const known = Object.keys(config.mcp.servers);
    throw new RuntimeError("invalid_params", `no MCP server "${server}" in the config (configured: ${known.length === 0 ? "none" : known.join(", ")})`);
  }
  if (!isRemoteServer(entry)) throw new RuntimeError("invalid_params", `MCP server "${server}" runs over stdio: only remote (url) servers log in`);
  const store = new McpAuthFiles(config.app.data_dir);
  const callback = await listenForCallback(options.port ?? (await registeredPort(store, server, entry.url)), options.logger);
  try {
    const auth = new McpAuth({ store, logger: options.logger, login: { redirectUrl: callback.redirectUrl, onAuthorizationUrl: options.showUrl } });
    const provider = auth.providerFor(server, entry);
    if (provider === undefined) throw new RuntimeError("invalid_params", `MCP server "${server}" sets its own Authorization header: it needs no login`);
    // The state proves a redirect answers this login, not one someone else started: the callback
    // server ignores any other (anyone on this machine can reach its port) and keeps waiting.
    callback.expectState(provider.state());
    // A registration made for another redirect port would be refused by the authorization server.
    const registered = await registeredPort(store, server, entry.url);
    await provider.invalidateCredentials(registered === callback.port ? "tokens" : "all");
    const { auth: runAuth } = await import("@modelcontextprotocol/sdk/client/auth.js");
    const first = await runAuth(provider, { serverUrl: entry.url });
    if (first === "REDIRECT") {
      const { code } = await callback.wait(options.signal === undefined ? AbortSignal.timeout(options.timeoutMs) : AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]));
      const second = await runAuth(provider, { serverUrl: entry.url, authorizationCode: code });
      if (second !== "AUTHORIZED") throw new RuntimeError("invalid_request", "the authorization server did not issue tokens");
    }
    return { file: store.fileOf(server) };
  } finally {
    await callback.close();
  }
}

/** The port of the redirect URI the stored registration was made with, or 0. */
async function registeredPort(store: McpAuthFiles, server: string, url: string): Promise<number> {
  const record = await store.read(server);
  const uris = record?.url === url ? record.client?.redirect_uris : undefined;
  const first = Array.isArray(uris) && typeof uris[0] === "string" ? uris[0] : undefined;
  if (first === undefined || !URL.canParse(first)) return 0;
  return Number(new URL(first).port) || 0;
}

/** The wanted port, or any free one when it is taken (the registration is then made again). */
async function listenForCallback(port: number, logger: Logger): Promise<OAuthCallbackServer> {
  try {
    return await OAuthCallbackServer.listen(port, logger);
  } catch (error) {
    if (port === 0) throw error;
    return OAuthCallbackServer.listen(0, logger);
  }
}
