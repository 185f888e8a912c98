/**
 * Keeps each conversation on the same llama-server slot, so the slot's KV cache still holds its
 * prefix next turn (`id_slot` + `cache_prompt`). A new conversation takes the least recently used
 * idle slot (evicting what it held); when every slot is busy, none is named and llama-server picks.
 */
export class SlotAffinity {
  private readonly owner: Array<string | null>;
  private readonly lastUsed: number[];
  private readonly busy: number[];
  private clock = 0;

  constructor(slots: number) {
    this.owner = Array.from({ length: slots }, () => null);
    this.lastUsed = Array.from({ length: slots }, () => 0);
    this.busy = Array.from({ length: slots }, () => 0);
  }

  /** The slot for this conversation, marked busy until `release`; null: let the server choose. */
  acquire(key: string | undefined): number | null {
    if (key === undefined || this.owner.length === 0) return null;
    let slot = this.owner.indexOf(key);
    if (slot === -1 || this.busy[slot] !== 0) {
      slot = this.leastRecentlyUsedIdle();
      if (slot === -1) return null;
      this.owner[slot] = key;
    }
    this.busy[slot] = (this.busy[slot] ?? 0) + 1;
    this.lastUsed[slot] = ++this.clock;
    return slot;
  }

  release(slot: number | null): void {
    if (slot !== null && (this.busy[slot] ?? 0) > 0) this.busy[slot] = (this.busy[slot] ?? 1) - 1;
  }

  private leastRecentlyUsedIdle(): number {
    let best = -1;
    for (let slot = 0; slot < this.owner.length; slot++) {
      if (this.busy[slot] !== 0) continue;
      if (best === -1 || (this.lastUsed[slot] ?? 0) < (this.lastUsed[best] ?? 0)) best = slot;
    }
    return best;
  }
}
