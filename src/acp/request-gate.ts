import type { JsonRpcId } from "@agentclientprotocol/sdk";

/**
 * Requests read from stdin whose response has not been written yet, counted where both cross
 * the wire (the stream), so the count is exact whatever the SDK does in between (its own error
 * answers included). Reading stops while `max` are open (backpressure on stdin), and shutdown
 * waits for `settled()`.
 */
export class RequestGate {
  private readonly open = new Map<string, number>();
  private count = 0;
  private waiters: Array<() => void> = [];

  constructor(private readonly max: number) {}

  get size(): number {
    return this.count;
  }

  received(id: JsonRpcId): void {
    const key = JSON.stringify(id);
    this.open.set(key, (this.open.get(key) ?? 0) + 1);
    this.count++;
  }

  answered(id: JsonRpcId): void {
    const key = JSON.stringify(id);
    const left = this.open.get(key);
    if (left === undefined) return;
    if (left <= 1) this.open.delete(key);
    else this.open.set(key, left - 1);
    this.count--;
    this.wake();
  }

  /** Resolves once fewer than `max` requests are open. */
  async belowLimit(): Promise<void> {
    while (this.count >= this.max) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Resolves once no request is open. */
  async settled(): Promise<void> {
    while (this.count > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
