import type { HistoryEntry } from "../../src/store/store-types.js";

/** Deterministic size per turn (a small LCG), 1 KiB .. 257 KiB: big enough that a kill can land inside a write. */
export function turnSize(n: number): number {
  const x = (Math.imul(n + 1, 1103515245) + 12345) >>> 0;
  return 1024 + (x % (256 * 1024));
}

/** Turn n of the kill-mid-write test, fully determined by n. */
export function expectedTurn(n: number): HistoryEntry {
  return {
    trace_id: `kill-${n}`,
    agent: "assistant",
    at: new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString(),
    messages: [
      { role: "user", content: `turn ${n}` },
      { role: "assistant", content: `${n}:`.padEnd(turnSize(n), String.fromCharCode(97 + (n % 26))) },
    ],
  };
}
