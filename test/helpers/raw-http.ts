import { connect, type Socket } from "node:net";

/**
 * HTTP/1.1 on a bare socket, for what fetch and node:http will not send: a Host of our choosing,
 * no Host, a lying Content-Length, both Content-Length and Transfer-Encoding, a body that never ends.
 */

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Splits what a server wrote into responses (Content-Length or chunked bodies; a body without either runs to the end). */
export function parseResponses(data: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = data;
  while (rest.startsWith("HTTP/")) {
    const headEnd = rest.indexOf("\r\n\r\n");
    if (headEnd === -1) break;
    const [statusLine = "", ...headerLines] = rest.slice(0, headEnd).split("\r\n");
    const headers: Record<string, string> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    rest = rest.slice(headEnd + 4);
    let body = "";
    if (headers["transfer-encoding"]?.toLowerCase() === "chunked") {
      for (;;) {
        const lineEnd = rest.indexOf("\r\n");
        const size = Number.parseInt(rest.slice(0, lineEnd), 16);
        if (lineEnd === -1 || Number.isNaN(size)) break;
        body += rest.slice(lineEnd + 2, lineEnd + 2 + size);
        rest = rest.slice(lineEnd + 2 + size + 2);
        if (size === 0) break;
      }
    } else if (headers["content-length"] !== undefined) {
      const length = Number(headers["content-length"]);
      body = rest.slice(0, length);
      rest = rest.slice(length);
    } else {
      body = rest;
      rest = "";
    }
    responses.push({ status: Number(statusLine.split(" ")[1]), headers, body });
  }
  return responses;
}

/**
 * Writes `request` and resolves with everything the server wrote once it closes the connection
 * (send `Connection: close`). `halfClose` ends our side after the request: Node's server takes
 * that as the client leaving (it aborts a request still being served).
 */
export function rawExchange(port: number, request: string | Buffer, options: { halfClose?: boolean; timeoutMs?: number } = {}): Promise<{ data: string; responses: RawResponse[] }> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let data = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close from the server in ${timeoutMs} ms; got ${JSON.stringify(data.slice(0, 500))}`));
    }, timeoutMs);
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (data += chunk));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ data, responses: parseResponses(data) });
    });
    if (options.halfClose === true) socket.end(request);
    else socket.write(request);
  });
}

export interface FloodResult {
  /** What the server wrote before it closed the connection. */
  responses: RawResponse[];
  /** Body bytes the kernel took from us before the server closed (what it had to read or discard). */
  bodyBytesSent: number;
  /** True when the server closed the connection (false: we stopped at `maxBytes`). */
  closedByServer: boolean;
}

/**
 * Sends `head`, then `chunk` over and over (a body that never ends) until the server closes the
 * connection or `maxBytes` went out. Writes wait for the socket to drain, so what counts as sent
 * is what the kernel accepted, not what piles up in our buffer.
 */
export function flood(port: number, head: string, chunk: Buffer, maxBytes: number, timeoutMs = 60_000): Promise<FloodResult> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, "127.0.0.1");
    let data = "";
    let sent = 0;
    let queued = 0;
    let closed = false;
    let stoppedByUs = false;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`flood: neither closed nor done in ${timeoutMs} ms (${sent} bytes sent); got ${JSON.stringify(data.slice(0, 500))}`));
    }, timeoutMs);
    socket.setEncoding("latin1");
    socket.on("data", (text: string) => (data += text));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      closed = true;
      clearTimeout(timer);
      resolve({ responses: parseResponses(data), bodyBytesSent: sent, closedByServer: !stoppedByUs });
    });
    const pump = (): void => {
      while (!closed && queued < maxBytes) {
        queued += chunk.length;
        const ok = socket.write(chunk, (error) => {
          if (error === undefined || error === null) sent += chunk.length;
        });
        if (!ok) {
          socket.once("drain", pump);
          return;
        }
      }
      if (!closed) {
        stoppedByUs = true;
        socket.destroy();
      }
    };
    socket.write(head, pump);
  });
}
