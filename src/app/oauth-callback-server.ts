import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface OAuthCallback {
  code: string;
  state: string | null;
}

/**
 * The loopback end of an OAuth authorization-code login (RFC 8252): an HTTP server on
 * 127.0.0.1 that waits for the browser's redirect to `/callback?code=...&state=...` (or
 * `?error=...`). Only that one request is answered with a page; anything else is a 404.
 */
export class OAuthCallbackServer {
  private readonly server: Server;
  private readonly result: Promise<OAuthCallback>;

  private constructor(server: Server, result: Promise<OAuthCallback>) {
    this.server = server;
    this.result = result;
  }

  /** Listens on 127.0.0.1:`port` (0: any free port); rejects when the port is taken. */
  static async listen(port: number): Promise<OAuthCallbackServer> {
    let settle: { resolve: (value: OAuthCallback) => void; reject: (error: Error) => void } | undefined;
    const result = new Promise<OAuthCallback>((resolve, reject) => (settle = { resolve, reject }));
    // Waited on only after the URL is shown; a rejection before that must not be unhandled.
    result.catch(() => undefined);
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      if (req.method !== "GET" || url.pathname !== "/callback") {
        res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
        return;
      }
      const code = url.searchParams.get("code");
      const error = url.searchParams.get("error");
      res.writeHead(code === null ? 400 : 200, { "content-type": "text/html; charset=utf-8" });
      res.end(code === null ? "<p>The login failed. See the terminal.</p>" : "<p>local-ai is logged in. You can close this tab.</p>");
      if (code !== null) settle?.resolve({ code, state: url.searchParams.get("state") });
      else settle?.reject(new Error(`the authorization server answered ${error ?? "without a code"}${url.searchParams.has("error_description") ? `: ${url.searchParams.get("error_description")}` : ""}`));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    return new OAuthCallbackServer(server, result);
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get redirectUrl(): string {
    return `http://127.0.0.1:${this.port}/callback`;
  }

  /** The redirect's code and state; rejects when `signal` aborts (the login timed out). */
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
