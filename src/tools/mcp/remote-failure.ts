/**
 * How a failure of an untrusted remote server (one a request named) is reported: in words of our
 * own (the status code, "not an MCP server", "connection refused", a timeout), never the body the
 * server answered nor its own error message, which an internal service could fill with what it
 * must not hand out (docs/http-api.md "MCP tools").
 */

/** An error whose message is already in our words. */
export class RemoteFailure extends Error {
  override name = "RemoteFailure";
}

const NETWORK_WORDS: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "the connection was reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found",
  ETIMEDOUT: "the connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  EPROTO: "the TLS handshake failed",
};

/** What a JSON-RPC error answer becomes: its code only. */
export function jsonRpcErrorWords(code: number): string {
  return `the server answered JSON-RPC error ${code}`;
}

/** An HTTP status the server answered, in words. */
function httpStatusWords(status: number): string {
  const head = `the server answered HTTP ${status}`;
  if (status === 401 || status === 403) return `${head} (not authorized: check the tool's authorization or headers)`;
  if (status >= 300 && status < 400) return `${head} (a redirect to another origin, not followed)`;
  if (status >= 400 && status < 500) return `${head}: not a Streamable HTTP MCP server`;
  if (status >= 500) return `${head} (a server error)`;
  return head;
}

/**
 * What a request to the server failed with (an error out of the SDK's Streamable HTTP transport):
 * an HTTP status (StreamableHTTPError's `code`), a network failure (fetch's `cause`), a body that
 * was neither JSON nor an event stream, or JSON that was not JSON-RPC.
 */
export function requestFailure(error: unknown): RemoteFailure {
  if (error instanceof RemoteFailure) return error;
  if (!(error instanceof Error)) return new RemoteFailure("the request to the server failed");
  if (error.name === "AbortError") return new RemoteFailure("the request was cancelled");
  const status = (error as { code?: unknown }).code;
  // StreamableHTTPError, known by its message: importing the SDK here would load it at start-up.
  if (error.message.startsWith("Streamable HTTP error: ") && typeof status === "number") {
    return new RemoteFailure(status > 0 ? httpStatusWords(status) : "not an MCP server (its answer is neither JSON nor an event stream)");
  }
  if (error instanceof TypeError && /fetch failed/i.test(error.message)) {
    const code = (error.cause as { code?: unknown } | undefined)?.code;
    const words = typeof code === "string" ? (NETWORK_WORDS[code] ?? `the connection failed (${code})`) : "the connection failed";
    return new RemoteFailure(words);
  }
  return new RemoteFailure(NOT_MCP);
}

const NOT_MCP = "not an MCP server (its answer does not follow the MCP protocol)";

/**
 * The words for any failure of an untrusted server (connect, list, call). The transport already
 * turned what the server sent into our words (RemoteFailure, JSON-RPC errors by code); what else
 * the SDK throws is its own (a timeout, a closed connection: "MCP error -32001: Request timed
 * out") or a check of the server's answer that may quote it (an unsupported protocol version, a
 * result that fails the schema): those say only that the server does not speak MCP.
 */
export function untrustedFailureText(error: unknown): string {
  if (error instanceof RemoteFailure) return error.message;
  if (error instanceof Error && error.name === "McpError") return error.message.replace(/^MCP error -?\d+: /, "");
  return NOT_MCP;
}
