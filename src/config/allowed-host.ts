import { isIPv6 } from "node:net";

/** The config key listing the hosts an MCP server a request names may be on although their address is internal. */
export const REQUEST_MCP_ALLOWED_HOSTS_KEY = "http.request_mcp_allowed_hosts";

/** One `http.request_mcp_allowed_hosts` entry: a host as a URL's hostname spells it, and a port (null: any). */
export interface AllowedHost {
  host: string;
  port: number | null;
}

/**
 * Parses `name`, `name:port`, an IPv4 address (in any form a URL accepts: `0x7f000001` is
 * 127.0.0.1), `[v6]`, `[v6]:port` or a bare IPv6 address. The host is normalized as a URL's
 * (lower case, IPv4 dotted, IPv6 compressed in brackets), so an entry matches a `server_url`
 * however either spells it. Returns the problem in words when the entry is not a host.
 */
export function parseAllowedHost(entry: string): AllowedHost | string {
  const problem = `"${entry}" is not a host: give a host name or an IP address, optionally with :port (an IPv6 address in brackets when a port follows)`;
  const text = entry.trim();
  const match = isIPv6(text) ? { host: `[${text}]`, port: undefined } : splitPort(text);
  if (match.host === "" || /[/\\@?#\s%]/.test(match.host) || (match.host.includes(":") && !/^\[[^\]]*\]$/.test(match.host))) return problem;
  let hostname: string;
  try {
    hostname = new URL(`http://${match.host}/`).hostname;
  } catch {
    return problem;
  }
  if (match.port === undefined) return { host: hostname, port: null };
  const port = Number(match.port);
  return port >= 1 && port <= 65_535 ? { host: hostname, port } : problem;
}

function splitPort(text: string): { host: string; port: string | undefined } {
  const found = /^(.*):(\d{1,5})$/.exec(text);
  return found === null ? { host: text, port: undefined } : { host: found[1] ?? "", port: found[2] };
}
