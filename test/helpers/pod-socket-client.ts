import { connect, type Socket } from "node:net";
import { WireTap } from "./wire-recorder.js";

export interface PodMessage {
  event: string;
  data: Record<string, unknown>;
}

/**
 * A Pod protocol client for tests: every event line is parsed and kept in order; waits resolve
 * on events (never on sleeps). `paused: true` connects without ever reading (a stalled listener).
 */
export class PodSocketClient {
  readonly events: PodMessage[] = [];
  readonly closed: Promise<void>;
  private partial = "";
  private listeners: Array<() => void> = [];
  private isClosed = false;
  /** Every event line goes to the wire recorder, validated against schema/pod.schema.json after the file. */
  private readonly tap = new WireTap("pod", "pod socket");

  private constructor(readonly socket: Socket) {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => this.onData(chunk));
    socket.on("error", () => undefined);
    this.closed = new Promise((resolve) =>
      socket.on("close", () => {
        this.isClosed = true;
        resolve();
        for (const listener of [...this.listeners]) listener();
      }),
    );
  }

  static connect(path: string, options: { paused?: boolean } = {}): Promise<PodSocketClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(path);
      if (options.paused === true) socket.pause();
      socket.once("error", reject);
      socket.once("connect", () => {
        socket.off("error", reject);
        resolve(new PodSocketClient(socket));
      });
    });
  }

  /** Connects and waits for the reply to get_status: from then on the pod counts it as a listener. */
  static async listening(path: string): Promise<PodSocketClient> {
    const client = await PodSocketClient.connect(path);
    client.send("get_status");
    await client.next("status");
    return client;
  }

  /**
   * `count` listeners, connected one after another. Every get_status answer goes to every client
   * (seed 004), so client i also gets the answers of the clients after it: this resolves once each
   * has all of them, and from then on nothing of the handshakes is still on its way.
   */
  static async listeningAll(path: string, count: number): Promise<PodSocketClient[]> {
    const clients: PodSocketClient[] = [];
    for (let i = 0; i < count; i++) clients.push(await PodSocketClient.listening(path));
    const statuses = (client: PodSocketClient): number => client.events.filter((message) => message.event === "status").length;
    await Promise.all(clients.map((client, i) => client.waitFor(() => statuses(client) >= count - i)));
    return clients;
  }

  send(method: string, params?: Record<string, unknown>): void {
    this.socket.write(`${JSON.stringify(params === undefined ? { method } : { method, params })}\n`);
  }

  sendRaw(text: string): void {
    this.socket.write(text);
  }

  /** The first event at index >= `from` that matches (seen or future). */
  waitFor(predicate: (message: PodMessage) => boolean, options: { from?: number; timeoutMs?: number } = {}): Promise<PodMessage> {
    const from = options.from ?? 0;
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.events.slice(from).find(predicate);
        if (found === undefined && !this.isClosed) return false;
        clearTimeout(timer);
        this.listeners = this.listeners.filter((listener) => listener !== onChange);
        if (found !== undefined) resolve(found);
        else reject(new Error(`connection closed before the event; got ${this.trail()}`));
        return true;
      };
      const onChange = (): void => void check();
      const timer = setTimeout(() => {
        this.listeners = this.listeners.filter((listener) => listener !== onChange);
        reject(new Error(`timed out waiting for an event; got ${this.trail()}`));
      }, options.timeoutMs ?? 30_000);
      if (!check()) this.listeners.push(onChange);
    });
  }

  /** The next event with this name from now on (events already received do not count). */
  next(name: string, timeoutMs?: number): Promise<PodMessage> {
    return this.waitFor((message) => message.event === name, { from: this.events.length, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
  }

  /** Events from index `from` without the streamed deltas, as `name` or `name:json(data)`. */
  trail(from = 0): string {
    return JSON.stringify(this.events.slice(from).filter((e) => e.event !== "text_delta").map((e) => e.event)).slice(0, 3000);
  }

  close(): Promise<void> {
    this.socket.end();
    return this.closed;
  }

  destroy(): void {
    this.socket.destroy();
  }

  private onData(chunk: string): void {
    const parts = (this.partial + chunk).split("\n");
    this.partial = parts.pop() ?? "";
    for (const line of parts) {
      this.tap.received(line);
      this.events.push(JSON.parse(line) as PodMessage);
    }
    for (const listener of [...this.listeners]) listener();
  }
}
