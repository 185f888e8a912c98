import { createServer, type Server, type Socket } from "node:net";
import { PodClientConnection, type ClientLimits } from "./pod-client-connection.js";
import { encodePodEvent, isDroppable, type PodEvent } from "./pod-event-types.js";
import type { LineItem as PodLine } from "../shared/line-splitter.js";
import { parsePodRequest } from "./pod-request.js";
import { PodHub, type PodHubOptions } from "./pod-hub.js";
import { awaitHandshake } from "./pod-handshake.js";
import { listenOnPipe } from "./pod-pipe.js";
import { claimSocketPath, listenOnSocket, removeSocketFile } from "./pod-socket-file.js";

export interface PodServerOptions extends PodHubOptions {
  socketPath: string;
  limits: ClientLimits;
  /** A named pipe (Windows: pod-endpoint.ts) instead of a socket file. */
  pipe?: boolean;
  /** When set, a client's first line must carry this token (pod-handshake.ts); others are dropped. */
  handshakeToken?: string | null;
}

/**
 * The Pod protocol on a Unix socket: every connection is a listener that gets every event from
 * the moment it connects (status and history answers included); methods from any client drive
 * the one PodHub. The one exception: a refusal or a bad line goes to its sender only, since it
 * answers what that client sent and changes nothing in the pod (docs/protocol-pod.md).
 */
export class PodServer {
  private readonly clients = new Set<PodClientConnection>();
  private readonly server: Server;
  private readonly hub: PodHub;
  private nextClientId = 1;
  private socketIno: number | null = null;

  constructor(private readonly options: PodServerOptions) {
    this.hub = new PodHub(options);
    // One hub listener fans out to the connections: each event is encoded once.
    this.hub.listen((event) => this.broadcast(event));
    this.server = createServer((socket) => this.accept(socket));
  }

  /** Claims the socket path (stale file replaced, live one refused: SocketInUseError) and listens. */
  async listen(): Promise<void> {
    if (this.options.pipe === true) return listenOnPipe(this.server, this.options.socketPath);
    await claimSocketPath(this.options.socketPath);
    this.socketIno = (await listenOnSocket(this.server, this.options.socketPath)).ino;
  }

  /** Picks up a turn a previous pod left paused on this session. */
  restore(): Promise<void> {
    return this.hub.restore();
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /** No new clients; the running turn gets `graceMs`; clients are flushed (bounded) and closed; the socket file goes. */
  async close(graceMs: number, flushMs: number): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.hub.stop(graceMs);
    await Promise.all([...this.clients].map((client) => client.close(flushMs)));
    await closed;
    if (this.socketIno !== null) await removeSocketFile(this.options.socketPath, this.socketIno);
  }

  private accept(socket: Socket): void {
    const token = this.options.handshakeToken;
    if (token === undefined || token === null) return this.admit(socket);
    void awaitHandshake(socket, token).then((ok) => {
      if (ok) {
        this.admit(socket);
        // awaitHandshake paused it, with what followed the token put back.
        socket.resume();
        return;
      }
      this.options.logger.warn("pod client dropped: no valid token as its first line");
      socket.destroy();
    });
  }

  private admit(socket: Socket): void {
    const id = this.nextClientId++;
    const client: PodClientConnection = new PodClientConnection(
      id,
      socket,
      this.options.limits,
      this.options.logger,
      (line) => this.onLine(client, line),
      () => {
        this.clients.delete(client);
        this.options.logger.debug({ client: id, clients: this.clients.size }, "client disconnected");
      },
    );
    this.clients.add(client);
    this.options.logger.debug({ client: id, clients: this.clients.size }, "client connected");
  }

  private onLine(client: PodClientConnection, line: PodLine): void {
    const toSender = (event: PodEvent): void => void client.send(encodePodEvent(event), false);
    if (line.kind === "overflow") {
      toSender({ event: "error", data: { code: "internal", message: `invalid request: line of ${line.bytes} bytes is longer than ${this.options.limits.maxLineBytes}; discarded` } });
      return;
    }
    const parsed = parsePodRequest(line.text);
    if (!parsed.ok) {
      toSender({ event: "error", data: { code: "internal", message: parsed.message } });
      return;
    }
    this.hub.handle(parsed.request, toSender);
  }

  private broadcast(event: PodEvent): void {
    const line = encodePodEvent(event);
    const droppable = isDroppable(event);
    for (const client of this.clients) client.send(line, droppable);
  }
}
