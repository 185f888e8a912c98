import type { MiddlewareHandler } from "hono";
import { HttpError } from "../openai/errors.js";

/**
 * DNS-rebinding guard: a web page on evil.example that resolves its name to 127.0.0.1 still
 * sends `Host: evil.example`. Only the bound host, the loopback names and `http.allowed_hosts`
 * are served; names may carry the bound port (or none).
 */
export function hostCheck(settings: { host: string; port: number; allowedHosts: readonly string[] }): MiddlewareHandler {
  const names = new Set(["localhost", "127.0.0.1", "[::1]", bracketed(settings.host), ...settings.allowedHosts.map(bracketed)].map((n) => n.toLowerCase()));
  return async (c, next) => {
    const host = (c.req.header("host") ?? "").toLowerCase();
    // The port is read per request: with --port 0 it is known only once the socket is bound.
    const match = /^(.*?)(?::(\d+))?$/.exec(host);
    const name = match?.[1] ?? "";
    const port = match?.[2];
    const allowed = names.has(name) && (port === undefined || Number(port) === settings.port);
    if (!allowed) throw new HttpError("host_not_allowed", `Host ${JSON.stringify(host.slice(0, 100))} is not allowed (add it to http.allowed_hosts)`);
    await next();
  };
}

/** IPv6 literals appear in Host headers in brackets. */
function bracketed(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
