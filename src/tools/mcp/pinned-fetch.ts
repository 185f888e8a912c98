import { request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { Readable } from "node:stream";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CheckedAddress, RemoteAddressPolicy } from "./remote-address-policy.js";

/** Statuses whose Response may carry no body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * A fetch for the MCP SDK's transport that checks every request's host with the policy and
 * connects only to the addresses it checked (node:http, whose `lookup` answers with them instead
 * of resolving again), so a name that resolves to a public address for the check and to an
 * internal one a moment later (DNS rebinding) still reaches a checked one.
 * Redirects are never followed here: the SDK follows same-origin ones through this fetch again.
 * A failure below HTTP rejects as fetch does (`TypeError: fetch failed`, the reason in `cause`).
 */
export function pinnedFetch(policy: RemoteAddressPolicy): FetchLike {
  return async (input, init = {}) => {
    const url = new URL(String(input));
    const addresses = await policy.check(url);
    if (init.body !== undefined && init.body !== null && typeof init.body !== "string") throw new TypeError("pinnedFetch sends string bodies only");
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    headers.host = url.host;
    const https = url.protocol === "https:";
    const options: RequestOptions = {
      // An IP literal is connected to as is (no lookup); a name through the checked addresses.
      host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      lookup: checkedLookup(addresses),
      port: url.port === "" ? (https ? 443 : 80) : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: init.method ?? "GET",
      headers,
      ...(init.signal ? { signal: init.signal } : {}),
    };
    return new Promise<Response>((resolve, reject) => {
      const req = (https ? httpsRequest : httpRequest)(options, (res) => {
        try {
          resolve(toResponse(res));
        } catch (error) {
          res.destroy();
          reject(new TypeError("fetch failed", { cause: error }));
        }
      });
      req.on("error", (error) => reject(error.name === "AbortError" ? error : new TypeError("fetch failed", { cause: error })));
      req.end(init.body ?? undefined);
    });
  };
}

/** A `lookup` that answers with the checked addresses (all of them when asked for all: Happy Eyeballs). */
function checkedLookup(addresses: readonly CheckedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const first = addresses[0] as CheckedAddress;
    if (options.all === true) callback(null, addresses.map(({ address, family }) => ({ address, family })));
    else callback(null, first.address, first.family);
  };
}

function toResponse(res: IncomingMessage): Response {
  const status = res.statusCode ?? 0;
  if (status < 200 || status > 599) throw new Error(`HTTP status ${status} is not a response fetch can give`);
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
  if (NULL_BODY.has(status)) {
    res.resume();
    return new Response(null, { status, headers });
  }
  return new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, { status, headers });
}
