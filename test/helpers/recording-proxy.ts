// A loopback HTTP proxy in front of a server that records each exchange as the client saw it:
// the request (method, path, headers, body) and the response (status, headers, body text,
// streamed bytes included). Used to compare what a real client printed with what the server sent.
// With `cut`, it also breaks off the first matching exchange after a delay (both sockets
// destroyed), as a dropped connection would: a client's retry then goes through untouched.
import { createServer, request, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface Exchange {
  method: string;
  url: string;
  requestHeaders: IncomingHttpHeaders;
  requestBody: string;
  status: number;
  responseHeaders: IncomingHttpHeaders;
  /** The response body so far (all of it once `ended`). */
  responseBody: string;
  /** The server ended the response (false: the client or the server broke it off). */
  ended: boolean;
}

/** Break off the first request to `path` `afterMs` after it arrived at the proxy. */
export interface ProxyCut {
  path: string;
  afterMs: number;
}

/** The exchange that was cut: when (performance.now() of this process) and the server's X-Request-Id for it. */
export interface ProxyCutDone {
  atMs: number;
  requestId: string | null;
  /** Whether the server's response had started (its headers had come) by then. */
  responseStarted: boolean;
}

export interface RecordingProxy {
  /** http://127.0.0.1:<port> */
  base: string;
  /** Every exchange, in the order their responses started. */
  exchanges: Exchange[];
  /** The cut, once made (with the `cut` option). */
  cutDone(): ProxyCutDone | null;
  close(): Promise<void>;
}

export async function startRecordingProxy(targetPort: number, cut?: ProxyCut): Promise<RecordingProxy> {
  const exchanges: Exchange[] = [];
  let cutArmed = cut !== undefined;
  let cutDone: ProxyCutDone | null = null;
  const server = createServer((req, res) => {
    const toCut = cutArmed && cut !== undefined && req.url === cut.path;
    if (toCut) cutArmed = false;
    let answerHeaders: IncomingHttpHeaders | null = null;
    const arrived = performance.now();
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const requestBody = Buffer.concat(parts);
      const upstream = request(
        { host: "127.0.0.1", port: targetPort, method: req.method, path: req.url, headers: { ...req.headers, host: `127.0.0.1:${targetPort}` } },
        (answer) => {
          answerHeaders = answer.headers;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.flushHeaders();
          // Recorded from the first byte on: a client that hangs up once it has what it needs
          // (Codex after response.completed) must not make the exchange disappear.
          const exchange: Exchange = {
            method: req.method ?? "",
            url: req.url ?? "",
            requestHeaders: req.headers,
            requestBody: requestBody.toString("utf8"),
            status: answer.statusCode ?? 0,
            responseHeaders: answer.headers,
            responseBody: "",
            ended: false,
          };
          exchanges.push(exchange);
          answer.setEncoding("utf8");
          answer.on("data", (part: string) => {
            exchange.responseBody += part;
            res.write(part);
          });
          answer.on("end", () => {
            exchange.ended = true;
            res.end();
          });
          answer.on("error", (err) => res.destroy(err));
        },
      );
      upstream.on("error", (err) => res.destroy(err));
      // A client that hangs up takes the upstream request with it (the server sees the disconnect).
      res.on("close", () => {
        if (!res.writableFinished) upstream.destroy();
      });
      upstream.end(requestBody);
      if (toCut && cut !== undefined) {
        const timer = setTimeout(() => {
          const requestId = answerHeaders?.["x-request-id"];
          cutDone = { atMs: performance.now(), requestId: typeof requestId === "string" ? requestId : null, responseStarted: answerHeaders !== null };
          // Both ways at once: the server sees its client gone, the client a connection reset mid-stream.
          upstream.destroy();
          res.socket?.destroy();
        }, Math.max(0, cut.afterMs - (performance.now() - arrived)));
        res.on("close", () => clearTimeout(timer));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    exchanges,
    cutDone: () => cutDone,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
