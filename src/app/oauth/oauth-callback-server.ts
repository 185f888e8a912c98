import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";

export interface OAuthCallback {
  code: string;
  state: string;
}

/**
 * The loopback end of an OAuth authorization-code login (RFC 8252): an HTTP server on
 * 127.0.0.1 that waits for the browser's redirect to `/callback?code=...&state=...` (or
 * `?error=...&state=...`). Only a redirect that brings back the login's own `state` settles the
 * wait: anything on this machine can reach the port, so a redirect with another state (or none)
 * is answered 400, logged and ignored, and the login keeps waiting for its own. Other paths: 404.
 */
export class OAuthCallbackServer {
  private readonly server: Server;
  private readonly result: Promise<OAuthCallback>;
  private readonly expected: { state: string | null };

  private constructor(server: Server, result: Promise<OAuthCallback>, expected: { state: string | null }) {
    this.server = server;
    this.result = result;
    this.expected = expected;
  }

  /** Listens on 127.0.0.1:`port` (0: any free port); rejects when the port is taken. */
  static async listen(port: number, logger: Logger): Promise<OAuthCallbackServer> {
    let settle: { resolve: (value: OAuthCallback) => void; reject: (error: Error) => void } | undefined;
    const result = new Promise<OAuthCallback>((resolve, reject) => (settle = { resolve, reject }));
    // Waited on only after the URL is shown; a rejection before that must not be unhandled.
    result.catch(() => undefined);
    const expected: { state: string | null } = { state: null };
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      if (req.method !== "GET" || url.pathname !== "/callback") {
        res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
        return;
      }
      const state = url.searchParams.get("state");
      const html = (status: number, text: string): void => {
        res.writeHead(status, { "content-type": "text/html; charset=utf-8" }).end(`<p>${text}</p>`);
      };
      if (expected.state === null || state !== expected.state) {
        logger.warn({ path: url.pathname, state_sent: state !== null }, "OAuth login: ignored a redirect whose state does not match the login in progress; still waiting for the right one");
        html(400, "This redirect does not belong to the login in progress (its state does not match); it was ignored.");
        return;
      }
      const code = url.searchParams.get("code");
      const error = url.searchParams.get("error");
      html(code === null ? 400 : 200, code === null ? "The login failed. See the terminal." : "local-ai is logged in. You can close this tab.");
      if (code !== null) settle?.resolve({ code, state });
      else settle?.reject(new Error(`the authorization server answered ${error ?? "without a code"}${url.searchParams.has("error_description") ? `: ${url.searchParams.get("error_description")}` : ""}`));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    return new OAuthCallbackServer(server, result, expected);
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get redirectUrl(): string {
    return `http://127.0.0.1:${this.port}/callback`;
  }

  /** The `state` of the login's authorization request: only a redirect bringing it back counts. */
  expectState(state: string): void {
    this.expected.state = state;
  }

  /** The redirect's code (its state matched); rejects when `signal` aborts (the login timed out). */
  wait(signal: AbortSignal): Promise<OAuthCallback> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => reject(new Error("no redirect came back before the login timed out"));
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.result.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
