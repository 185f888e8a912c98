// A loopback HTTP proxy in front of a server that records each exchange as the client saw it:
// the request (method, path, headers, body) and the response (status, headers, body text,
// streamed bytes included). Used to compare what a real client printed with what the server sent.
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

export interface RecordingProxy {
  /** http://127.0.0.1:<port> */
  base: string;
  /** Every exchange, in the order their responses started. */
  exchanges: Exchange[];
  close(): Promise<void>;
}

export async function startRecordingProxy(targetPort: number): Promise<RecordingProxy> {
  const exchanges: Exchange[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const requestBody = Buffer.concat(parts);
      const upstream = request(
        { host: "127.0.0.1", port: targetPort, method: req.method, path: req.url, headers: { ...req.headers, host: `127.0.0.1:${targetPort}` } },
        (answer) => {
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
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
