import type { McpRemoteServerConfig } from "../../../config/schema.js";
import type { Logger } from "../../../logging/create-logger.js";
import type { McpAuthStore } from "../../../shared/mcp-auth-record.js";
import { McpOAuthProvider, type InteractiveLogin } from "./mcp-oauth-provider.js";

export interface McpAuthDeps {
  store: McpAuthStore;
  logger: Logger;
  /** `local-ai mcp login` only. */
  login?: InteractiveLogin;
}

/**
 * OAuth for the remote servers of one tool provider: one McpOAuthProvider per server, made by
 * the composition root with the data_dir store. A server whose config sets its own
 * Authorization header gets none: that header is its authentication.
 */
export class McpAuth {
  private readonly providers = new Map<string, McpOAuthProvider>();

  constructor(private readonly deps: McpAuthDeps) {}

  get store(): McpAuthStore {
    return this.deps.store;
  }

  providerFor(server: string, config: McpRemoteServerConfig): McpOAuthProvider | undefined {
    if (Object.keys(config.headers).some((name) => name.toLowerCase() === "authorization")) return undefined;
    const key = `${server}\n${config.url}`;
    let provider = this.providers.get(key);
    if (provider === undefined) {
      provider = new McpOAuthProvider(server, config, {
        store: this.deps.store,
        logger: this.deps.logger.child({ server }),
        ...(this.deps.login === undefined ? {} : { login: this.deps.login }),
        refresh: async (target) => {
          const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
          await auth(target, { serverUrl: target.serverUrl });
        },
      });
      this.providers.set(key, provider);
    }
    return provider;
  }

  /** A connection made with the stored login (one made by another McpAuth, e.g. ACP's login flow). */
  connected(server: string): void {
    for (const provider of this.providers.values()) if (provider.server === server) provider.needsLogin = false;
  }

  /** The last connection attempt found no usable login for this server. */
  needsLogin(server: string): boolean {
    return [...this.providers.values()].some((provider) => provider.server === server && provider.needsLogin);
  }
}
