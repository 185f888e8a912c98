import type { MiddlewareHandler } from "hono";
import { HttpError } from "../http-error.js";

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);

/**
 * Cross-site request guard for the routes that do work. A web page the user visits can send a
 * "simple" cross-origin request without a CORS preflight (`Content-Type: text/plain`, a form) to
 * a token-less local server; CORS only stops it from reading the answer, not the turn from
 * running. So: a browser `Origin` that is not in `http.cors_origins` is refused (403) on every
 * method, and a body must be declared `application/json` (415), which a page can only send after
 * a preflight that an unlisted origin fails. Clients outside a browser send no `Origin`.
 */
export function crossSiteGuard(settings: { corsOrigins: readonly string[] }): MiddlewareHandler {
  const allowed = new Set(settings.corsOrigins.map((origin) => origin.toLowerCase()));
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (origin !== undefined && !allowed.has(origin.toLowerCase())) {
      throw new HttpError("origin_not_allowed", `Origin ${JSON.stringify(origin.slice(0, 100))} is not allowed (add it to http.cors_origins)`);
    }
    if (BODY_METHODS.has(c.req.method) && !isJson(c.req.header("content-type"))) {
      throw new HttpError("unsupported_media_type", `Content-Type must be application/json (got ${JSON.stringify((c.req.header("content-type") ?? "none").slice(0, 100))})`);
    }
    await next();
  };
}

/** `application/json`, with or without parameters such as `; charset=utf-8`. */
function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  return contentType.split(";")[0]?.trim().toLowerCase() === "application/json";
}
