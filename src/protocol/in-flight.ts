import type { RequestId } from "./messages.js";

export interface InFlightEntry {
  /** null for a JSON-RPC notification (run, never answered, not reachable by id). */
  id: RequestId | null;
  method: string;
  controller: AbortController;
  done: Promise<void>;
}

/** `1` and `"1"` are different ids on the wire, so the key keeps the JSON type. */
function keyOf(id: RequestId | null): string {
  return `${typeof id}:${String(id)}`;
}

/** The requests being handled right now, by id, so `cancel` and shutdown can reach them. */
export class InFlightRequests {
  private readonly entries = new Map<string, InFlightEntry>();
  private anonymous = 0;

  get size(): number {
    return this.entries.size;
  }

  has(id: RequestId | null): boolean {
    return this.entries.has(keyOf(id));
  }

  get(id: RequestId | null): InFlightEntry | undefined {
    return this.entries.get(keyOf(id));
  }

  /** Returns the key to delete the entry with; notifications get a key of their own. */
  add(entry: InFlightEntry, notification = false): string {
    const key = notification ? `notification:${++this.anonymous}` : keyOf(entry.id);
    this.entries.set(key, entry);
    return key;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  list(method?: string): InFlightEntry[] {
    const all = [...this.entries.values()];
    return method === undefined ? all : all.filter((entry) => entry.method === method);
  }

  abortAll(reason: string): void {
    for (const entry of this.entries.values()) entry.controller.abort(reason);
  }

  /** Resolves when every request in flight now has finished. */
  async settled(): Promise<void> {
    await Promise.all([...this.entries.values()].map((entry) => entry.done));
  }
}
