import { randomUUID } from "node:crypto";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { AuthorizationParams, OAuthServerProvider } from "@modelcontextprotocol/sdk/server/auth/provider.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { OAuthClientInformationFull, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { DemoInMemoryClientsStore } from "@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js";

interface Token {
  clientId: string;
  expiresAt: number;
  resource?: URL | undefined;
}

/**
 * An in-memory OAuth authorization server for the SDK's mcpAuthRouter, like the SDK's demo
 * provider (whose client store it uses) plus what the tests need: refresh tokens, a chosen
 * access-token lifetime, server-side expiry of every access token, and counters. `authorize`
 * approves at once (the "user" always agrees) and redirects with the code and state.
 */
export class TestOAuthProvider implements OAuthServerProvider {
  readonly clientsStore = new DemoInMemoryClientsStore();
  readonly registrations: string[] = [];
  refreshes = 0;
  codeExchanges = 0;
  private readonly codes = new Map<string, { client: OAuthClientInformationFull; params: AuthorizationParams }>();
  private readonly access = new Map<string, Token>();
  private readonly refresh = new Map<string, string>();

  constructor(private readonly accessTokenSeconds = 3600) {
    const register = this.clientsStore.registerClient.bind(this.clientsStore);
    this.clientsStore.registerClient = async (client: OAuthClientInformationFull) => {
      this.registrations.push(client.client_id);
      return register(client);
    };
  }

  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: { redirect(url: string): void }): Promise<void> {
    const code = randomUUID();
    this.codes.set(code, { client, params });
    const target = new URL(params.redirectUri);
    target.searchParams.set("code", code);
    if (params.state !== undefined) target.searchParams.set("state", params.state);
    res.redirect(target.href);
  }

  async challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string): Promise<string> {
    const found = this.codes.get(code);
    if (found === undefined) throw new Error("unknown authorization code");
    return found.params.codeChallenge;
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<OAuthTokens> {
    const found = this.codes.get(code);
    if (found === undefined || found.client.client_id !== client.client_id) throw new Error("unknown authorization code");
    this.codes.delete(code);
    this.codeExchanges++;
    return this.issue(client.client_id, found.params.resource);
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string): Promise<OAuthTokens> {
    if (this.refresh.get(refreshToken) !== client.client_id) throw new Error("unknown refresh token");
    this.refresh.delete(refreshToken);
    this.refreshes++;
    return this.issue(client.client_id, undefined);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const found = this.access.get(token);
    // InvalidTokenError: requireBearerAuth answers it with 401 and WWW-Authenticate (any other error is a 500).
    if (found === undefined || found.expiresAt <= Date.now()) throw new InvalidTokenError("invalid or expired token");
    return { token, clientId: found.clientId, scopes: [], expiresAt: Math.floor(found.expiresAt / 1000), ...(found.resource ? { resource: found.resource } : {}) };
  }

  /** Every access token issued so far stops working now (the refresh tokens still do). */
  expireAccessTokens(): void {
    for (const token of this.access.values()) token.expiresAt = 0;
  }

  private issue(clientId: string, resource: URL | undefined): OAuthTokens {
    const accessToken = randomUUID();
    const refreshToken = randomUUID();
    this.access.set(accessToken, { clientId, expiresAt: Date.now() + this.accessTokenSeconds * 1000, resource });
    this.refresh.set(refreshToken, clientId);
    return { access_token: accessToken, token_type: "bearer", expires_in: this.accessTokenSeconds, refresh_token: refreshToken };
  }
}
