import { allowListedEnv, type EnvAllowList } from "../../shared/process/child-env.js";

/**
 * What an MCP server child gets beyond the base allow-list: a shell and terminal, and the network
 * setup that `npx -y some-server` needs behind a proxy or a private CA. Anything else a server
 * needs is named in its config's `env`.
 */
const MCP_SERVER_ENV: EnvAllowList = {
  names: [
    "SHELL", "TERM",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
    "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
  ],
};

export function mcpServerEnv(parent: Readonly<Record<string, string | undefined>>, serverEnv: Readonly<Record<string, string>>): Record<string, string> {
  return { ...allowListedEnv(parent, [MCP_SERVER_ENV]), ...serverEnv };
}
