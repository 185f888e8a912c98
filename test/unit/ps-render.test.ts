import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderPs, type PsRow } from "../../src/cli/commands/ps-action.js";

const GiB = 1024 ** 3;
const row = (id: string, ram: number, vram: number, extra: Partial<PsRow> = {}): PsRow => ({ id, context_length: 4096, memory: { ram_bytes: ram, vram_bytes: vram, measured: true }, expires_at: null, pinned: false, in_flight: 0, ...extra });

describe("local-ai ps table", () => {
  it("shows size, the CPU/GPU split as ollama ps does, context and when each model unloads", () => {
    const now = Date.parse("2026-12-01T16:00:00Z");
    const text = renderPs(
      [
        row("cpu", 2 * GiB, 0),
        row("gpu", 0, 4 * GiB, { pinned: true }),
        row("split", 0.48 * 10 * GiB, 0.52 * 10 * GiB, { expires_at: "2026-12-01T16:05:00Z", memory: { ram_bytes: 0.48 * 10 * GiB, vram_bytes: 0.52 * 10 * GiB, measured: false } }),
        row("busy", GiB, 0, { in_flight: 2, context_length: null }),
      ],
      now,
    );
    assert.equal(
      text,
      [
        "NAME    SIZE              PROCESSOR         CONTEXT   UNTIL",
        "cpu     2.0 GiB           100% CPU          4096      Forever",
        "gpu     4.0 GiB           100% GPU          4096      pinned",
        "split   10.0 GiB (est.)   48%/52% CPU/GPU   4096      5 minutes from now",
        "busy    1.0 GiB           100% CPU          -         in use",
        "",
      ].join("\n"),
    );
  });
});
