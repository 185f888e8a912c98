// A loopback HTTP server that serves GGUF files the way a model host does: Range requests (206 with
// Content-Range), Accept-Ranges, HEAD, and the two Hugging Face paths node-llama-cpp 3.21 requests
// for `hf:` references through HF_ENDPOINT (only those): the manifest
// `GET /v2/<user>/<repo>/manifests/<tag>` (it sends User-Agent: llama-cpp and reads
// `ggufFile.rfilename`) and the file `GET /<user>/<repo>/resolve/main/<file>?download=true`.
// It records every request and the bytes of file data it wrote, ranged and not, and can cut the
// files at an offset (connections stall there, mid-file) to interrupt a download at a known point.
import { EventEmitter } from "node:events";
import { open } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** Bytes of a served file: a real file, or a header followed by zeros up to any size (never on disk). */
export interface FileSource {
  size: number;
  read(start: number, length: number): Promise<Buffer>;
}

export function fileSource(path: string, size: number): FileSource {
  return {
    size,
    async read(start, length) {
      const handle = await open(path, "r");
      try {
        const buffer = Buffer.alloc(length);
        const { bytesRead } = await handle.read(buffer, 0, length, start);
        return buffer.subarray(0, bytesRead);
      } finally {
        await handle.close();
      }
    },
  };
}

/** A file that is `header` then zeros, `size` bytes in all: a model of any declared size. */
export function virtualSource(header: Uint8Array, size: number): FileSource {
  return {
    size,
    async read(start, length) {
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - start)));
      if (start < header.length) Buffer.from(header.subarray(start, Math.min(header.length, start + buffer.length))).copy(buffer);
      return buffer;
    },
  };
}

export interface ServedRequest {
  method: string;
  path: string;
  range: string | null;
  userAgent: string | null;
  authorization: string | null;
  status: number;
  /** File data bytes this response wrote. */
  bytes: number;
}

const WRITE_CHUNK = 64 * 1024;

export class ModelFileServer extends EventEmitter {
  readonly requests: ServedRequest[] = [];
  private readonly files = new Map<string, FileSource>();
  private readonly manifests = new Map<string, string>();
  private readonly redirects = new Map<string, { location: string; status: number }>();
  /** Manifest requests still to answer 429 (the hub's rate limit, retry after 0 s). */
  private rateLimited = 0;
  /** Hub paths (manifest and resolve) answer 401 unless `Authorization: Bearer <token>` (a gated repository). */
  private hubToken: string | null = null;
  /** Responses send nothing at or past this file offset: they hold the connection there (null: no cut). */
  private cut: number | null = null;
  private held = 0;

  private constructor(private readonly server: Server) {
    super();
  }

  static async start(): Promise<ModelFileServer> {
    let self: ModelFileServer | null = null;
    const server = createServer((request, response) => void self?.handle(request, response));
    self = new ModelFileServer(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return self;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Serves `source` at `urlPath` (e.g. "/files/tiny.gguf"). */
  serve(urlPath: string, source: FileSource): string {
    this.files.set(urlPath, source);
    return `${this.origin}${urlPath}`;
  }

  /** A Hugging Face repository file, and (with `tag`) the manifest that resolves `hf:user/repo:tag` to it. */
  serveHub(user: string, repo: string, file: string, source: FileSource, tag?: string): void {
    this.files.set(`/${user}/${repo}/resolve/main/${file}`, source);
    if (tag !== undefined) this.manifests.set(`/v2/${user}/${repo}/manifests/${tag}`, file);
  }

  /** Answers `urlPath` (a file or a hub path) with a redirect to `location` (another server, say) instead. */
  redirect(urlPath: string, location: string, status = 302): void {
    this.redirects.set(urlPath, { location, status });
  }

  /** The next `count` manifest requests are rate limited (429 with `ratelimit: ...;t=0`). */
  rateLimitManifests(count: number): void {
    this.rateLimited = count;
  }

  /** Gates the hub paths behind this token (null: open). */
  gateHub(token: string | null): void {
    this.hubToken = token;
  }

  /**
   * From now on the files end at `offset` for the network: a response reaching it stops sending
   * and holds its connection open (a transfer stalled mid-file), until the client gives up.
   */
  cutAt(offset: number | null): void {
    this.cut = offset;
  }

  /** Responses holding (stalled) right now. */
  get holding(): number {
    return this.held;
  }

  /** Bytes of file data sent in ranged (206) responses, and in whole-file (200) ones. */
  bytesServed(): { ranged: number; whole: number } {
    let ranged = 0;
    let whole = 0;
    for (const request of this.requests) {
      if (request.status === 206) ranged += request.bytes;
      else if (request.status === 200) whole += request.bytes;
    }
    return { ranged, whole };
  }

  reset(): void {
    this.requests.length = 0;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", this.origin);
    const record: ServedRequest = {
      method: request.method ?? "GET",
      path: url.pathname,
      range: request.headers.range ?? null,
      userAgent: request.headers["user-agent"] ?? null,
      authorization: request.headers.authorization ?? null,
      status: 0,
      bytes: 0,
    };
    this.requests.push(record);
    const hubPath = this.manifests.has(url.pathname) || url.pathname.includes("/resolve/main/");
    if (hubPath && this.hubToken !== null && record.authorization !== `Bearer ${this.hubToken}`) {
      record.status = 401;
      response.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "Access to this repository is restricted" }));
      return;
    }
    const redirect = this.redirects.get(url.pathname);
    if (redirect !== undefined) {
      record.status = redirect.status;
      response.writeHead(redirect.status, { location: redirect.location }).end();
      return;
    }
    const manifest = this.manifests.get(url.pathname);
    if (manifest !== undefined && this.rateLimited > 0) {
      this.rateLimited -= 1;
      record.status = 429;
      response.writeHead(429, { ratelimit: '"api";r=0;t=0' }).end("Too Many Requests");
      return;
    }
    if (manifest !== undefined) {
      record.status = 200;
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ggufFile: { rfilename: manifest } }));
      return;
    }
    const source = this.files.get(url.pathname);
    if (source === undefined) {
      record.status = 404;
      response.writeHead(404).end("Entry not found");
      return;
    }
    const range = parseRange(record.range, source.size);
    if (range === "invalid") {
      record.status = 416;
      response.writeHead(416, { "content-range": `bytes */${source.size}` }).end();
      return;
    }
    const start = range?.start ?? 0;
    const end = range?.end ?? source.size - 1;
    record.status = range === null ? 200 : 206;
    response.writeHead(record.status, {
      "accept-ranges": "bytes",
      "content-length": String(end - start + 1),
      "content-type": "application/octet-stream",
      ...(range === null ? {} : { "content-range": `bytes ${start}-${end}/${source.size}` }),
    });
    if (record.method === "HEAD") {
      response.end();
      return;
    }
    // Headers go out at once, as a real server sends them; a cut then stalls the body only.
    response.flushHeaders();
    const cut = this.cut ?? Number.POSITIVE_INFINITY;
    let closed = false;
    response.on("close", () => (closed = true));
    for (let at = start; at <= end && !closed; ) {
      if (at >= cut) {
        // Stalled mid-file: nothing more is sent until the client gives up or the server closes.
        this.held += 1;
        this.emit("hold", record);
        await new Promise<void>((resolve) => response.once("close", resolve));
        this.held -= 1;
        return;
      }
      const length = Math.min(WRITE_CHUNK, end + 1 - at, cut - at);
      const data = await source.read(at, length);
      if (closed) return;
      at += data.length;
      record.bytes += data.length;
      // Backpressure: a client that does not read (a probe whose body it drops) stops the sending.
      if (!response.write(data)) await new Promise<void>((resolve) => {
        const done = (): void => {
          response.off("drain", done);
          response.off("close", done);
          resolve();
        };
        response.on("drain", done);
        response.on("close", done);
      });
    }
    if (!closed) response.end();
  }
}

function parseRange(header: string | null, size: number): { start: number; end: number } | null | "invalid" {
  if (header === null) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (match === null) return "invalid";
  const start = match[1] === "" ? size - Number(match[2]) : Number(match[1]);
  const end = match[1] === "" || match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (!(start >= 0) || start > end || start >= size) return "invalid";
  return { start, end };
}
