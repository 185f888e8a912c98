import { isIP } from "node:net";
import type { MiddlewareHandler } from "hono";
import { HttpError } from "../http-error.js";

/**
 * DNS-rebinding guard: a web page on evil.example whose name the attacker re-points at 127.0.0.1
 * still sends `Host: evil.example`. Served: the loopback names, the bound host, `http.allowed_hosts`
 * and any IP literal (a rebinding needs a DNS name; an IP literal comes from a client that typed
 * it, a LAN client of a server bound to 0.0.0.0). The port is not checked: an attacker cannot pick
 * the name, only the port, and a port differs only behind a forward (`ssh -L 9000:localhost:8080`,
 * `docker -p`), which must keep working. No Host at all (HTTP/1.0) cannot come from a browser.
 */
export function hostCheck(settings: { host: string; allowedHosts: readonly string[] }): MiddlewareHandler {
  const names = new Set(["localhost", settings.host, ...settings.allowedHosts].map(hostName));
  return async (c, next) => {
    const host = c.req.header("host") ?? "";
    const name = hostName(host);
    const allowed = host === "" || names.has(name) || isIP(name.replace(/^\[(.*)\]$/, "$1")) !== 0;
    if (!allowed) throw new HttpError("host_not_allowed", `Host ${JSON.stringify(host.slice(0, 100))} is not allowed (add it to http.allowed_hosts)`);
    await next();
  };
}

/** The name part of a Host header or an allow-list entry, lower case, without its port; an IPv6 literal keeps its brackets. */
function hostName(value: string): string {
  const host = value.trim().toLowerCase();
  if (host.startsWith("[")) return host.slice(0, host.indexOf("]") + 1 || host.length);
  // A bare IPv6 literal (a bound host or an entry written without brackets) has several colons.
  if (isIP(host) === 6) return `[${host}]`;
  const colon = host.lastIndexOf(":");
  return colon === -1 || !/^\d*$/.test(host.slice(colon + 1)) ? host : host.slice(0, colon);
}
