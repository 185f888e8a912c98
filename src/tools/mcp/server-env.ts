/**
 * The environment an MCP server child gets: an allow-list of our environment plus the server's
 * `env` from the config. Our process may hold API keys and tokens that a third-party tool server
 * has no business seeing; what a server needs is named in its config.
 */

const ALLOWED = new Set([
  "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TMP", "TEMP",
  // Windows basics, without which Node and npx cannot even start there.
  "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "APPDATA", "LOCALAPPDATA", "USERPROFILE",
  "PROGRAMFILES", "HOMEDRIVE", "HOMEPATH", "USERNAME",
  // Network setup that `npx -y some-server` needs behind a proxy or a private CA.
  "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
  "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
]);

const ALLOWED_PREFIXES = ["LC_"];

export function mcpServerEnv(
  parent: Readonly<Record<string, string | undefined>>,
  serverEnv: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    if (ALLOWED.has(key) || ALLOWED_PREFIXES.some((prefix) => key.startsWith(prefix))) env[key] = value;
  }
  return { ...env, ...serverEnv };
}
