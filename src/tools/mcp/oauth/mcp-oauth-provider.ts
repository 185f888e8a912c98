import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { McpRemoteServerConfig } from "../../../config/schema.js";
import type { Logger } from "../../../logging/create-logger.js";
import type { McpAuthRecord, McpAuthStore } from "../../../shared/mcp-auth-record.js";
import { LoginRequiredError } from "./login-required.js";

/** An access token this close to its expiry is refreshed before it is used. */
const REFRESH_MARGIN_MS = 60_000;

export interface InteractiveLogin {
  /** http://127.0.0.1:<port>/callback, where `local-ai mcp login` waits. */
  redirectUrl: string;
  /** Shows the user the authorization URL (prints it; opens a browser where allowed). */
  onAuthorizationUrl(url: URL): void | Promise<void>;
}

export interface McpOAuthProviderDeps {
  store: McpAuthStore;
  logger: Logger;
  /** Only `local-ai mcp login` has one: every other front door never starts a browser flow. */
  login?: InteractiveLogin;
  /** Runs the SDK's auth() for a refresh (the caller's, so the SDK stays a lazy import). */
  refresh: (provider: McpOAuthProvider) => Promise<unknown>;
}

/**
 * The MCP SDK's OAuthClientProvider for one configured server (the SDK runs discovery, dynamic
 * registration, PKCE, the code exchange and refreshes; this keeps their results). The client
 * registration and tokens live in the auth store (one 0600 file per server). Without `login`,
 * anything that would need the user (no client, no usable token) throws LoginRequiredError,
 * which names `local-ai mcp login <server>`.
 */
export class McpOAuthProvider implements OAuthClientProvider {
  /** Set when the last attempt found no usable login; cleared when tokens are saved. */
  needsLogin = false;
  private verifier: string | undefined;
  private readonly stateValue = randomBytes(16).toString("hex");
  private refreshing = false;

  constructor(
    readonly server: string,
    private readonly config: McpRemoteServerConfig,
    private readonly deps: McpOAuthProviderDeps,
  ) {}

  get serverUrl(): string {
    return this.config.url;
  }

  get redirectUrl(): string {
    // The SDK takes a provider without a redirect URL for a client-credentials client: every
    // provider has one; a non-interactive one stops before it is ever used (redirectToAuthorization).
    return this.deps.login?.redirectUrl ?? "http://127.0.0.1/callback";
  }

  get clientMetadata(): OAuthClientMetadata {
    const scopes = this.config.oauth?.scopes ?? [];
    return {
      client_name: "local-ai",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: this.config.oauth?.client_secret_file ? "client_secret_post" : "none",
      ...(scopes.length > 0 ? { scope: scopes.join(" ") } : {}),
    };
  }

  /** The `state` sent with the authorization request; the login's callback must bring it back. */
  state(): string {
    return this.stateValue;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const oauth = this.config.oauth;
    if (oauth !== null) {
      const secret = oauth.client_secret_file === null ? undefined : (await readFile(oauth.client_secret_file, "utf8")).split(/\r?\n/)[0]?.trim();
      return { client_id: oauth.client_id, ...(secret ? { client_secret: secret } : {}) };
    }
    const client = (await this.record()).client as OAuthClientInformationMixed | undefined;
    // Registering a client is the first step of a login: only `local-ai mcp login` takes it.
    if (client === undefined && this.deps.login === undefined) throw this.loginRequired();
    return client;
  }

  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    await this.update((record) => ({ ...record, client: { ...client } }));
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    const record = await this.record();
    const tokens = record.tokens as OAuthTokens | undefined;
    if (tokens === undefined || this.refreshing || !expiresSoon(record)) return tokens;
    if (tokens.refresh_token === undefined) return tokens;
    // Refreshed before it runs out rather than after a 401: a tool call then never fails on it.
    this.refreshing = true;
    try {
      await this.deps.refresh(this);
      this.deps.logger.info("OAuth access token refreshed before it expired");
    } catch (error) {
      this.deps.logger.warn({ err: error }, "OAuth token refresh failed");
    } finally {
      this.refreshing = false;
    }
    return (await this.record()).tokens as OAuthTokens | undefined;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    this.needsLogin = false;
    await this.update((record) => ({ ...record, tokens: { ...tokens }, tokens_saved_at: Date.now() }));
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (this.deps.login === undefined) throw this.loginRequired();
    await this.deps.login.onAuthorizationUrl(url);
  }

  saveCodeVerifier(verifier: string): void {
    // Kept in memory: the login that made it is the only one that can use it.
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error("no PKCE code verifier: the login was not started by this process");
    return this.verifier;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "verifier" || scope === "discovery") {
      if (scope === "verifier") this.verifier = undefined;
      return;
    }
    await this.update((record) => ({
      url: record.url,
      ...(scope === "tokens" && record.client !== undefined ? { client: record.client } : {}),
    }));
  }

  /** Whether tokens are stored (for `mcp list` and doctor); says nothing about their validity. */
  async hasTokens(): Promise<boolean> {
    return (await this.record()).tokens !== undefined;
  }

  private loginRequired(): LoginRequiredError {
    this.needsLogin = true;
    return new LoginRequiredError(this.server);
  }

  /** The stored login, when it was made for this server's URL (else none). */
  private async record(): Promise<McpAuthRecord> {
    const stored = await this.deps.store.read(this.server);
    return stored !== undefined && stored.url === this.config.url ? stored : { url: this.config.url };
  }

  private async update(change: (record: McpAuthRecord) => McpAuthRecord): Promise<void> {
    await this.deps.store.write(this.server, change(await this.record()));
  }
}

function expiresSoon(record: McpAuthRecord): boolean {
  const expiresIn = record.tokens?.expires_in;
  if (typeof expiresIn !== "number" || record.tokens_saved_at === undefined) return false;
  return record.tokens_saved_at + expiresIn * 1000 - REFRESH_MARGIN_MS <= Date.now();
}
