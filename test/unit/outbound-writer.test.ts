import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { setImmediate as tick } from "node:timers/promises";
import { OutboundWriter } from "../../src/protocol/outbound-writer.js";
import { captureLogger } from "../helpers/capture-logger.js";

/** A writable that records each write call; `stall` holds callbacks until released. */
class RecordingStream extends Writable {
  writes: string[] = [];
  private held: Array<() => void> = [];
  stalled = false;

  constructor(highWaterMark = 16 * 1024) {
    super({ highWaterMark, decodeStrings: false });
  }

  override _write(chunk: string | Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.writes.push(chunk.toString());
    if (this.stalled) this.held.push(() => callback());
    else callback();
  }

  release(): void {
    this.stalled = false;
    const held = this.held;
    this.held = [];
    for (const done of held) done();
  }

  text(): string {
    return this.writes.join("");
  }
}

class BrokenPipe extends Writable {
  attempts = 0;
  override _write(_chunk: unknown, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.attempts++;
    const error = Object.assign(new Error("write EPIPE"), { code: "EPIPE" });
    callback(error);
  }
}

const line = (id: number, kind = "event"): string => `${JSON.stringify({ id, type: kind })}\n`;

describe("OutboundWriter", () => {
  it("writes messages in FIFO order, one write per drained batch", async () => {
    const out = new RecordingStream();
    const { logger } = captureLogger();
    const writer = new OutboundWriter(out, { maxMessages: 100, logger });
    for (let i = 0; i < 50; i++) assert.equal(writer.offer(line(i)), true);
    await writer.push(line(50, "result"));
    assert.equal(await writer.flush(1000), true);
    const ids = out.text().trim().split("\n").map((l) => (JSON.parse(l) as { id: number }).id);
    assert.deepEqual(ids, Array.from({ length: 51 }, (_, i) => i));
    // Everything queued in one tick is one batch: far fewer writes than messages.
    assert.equal(out.writes.length, 1);
    assert.equal(writer.stats.batches, 1);
  });

  it("drops events when the queue is full, counts them and logs STDIO_WRITER_DROP at debug", async () => {
    const out = new RecordingStream(1);
    out.stalled = true;
    const { logger, records } = captureLogger("debug");
    const writer = new OutboundWriter(out, { maxMessages: 10, logger });
    writer.offer(line(0));
    await tick(); // the first batch is handed to the stalled stream; the writer now waits for drain
    let accepted = 0;
    for (let i = 1; i <= 100; i++) if (writer.offer(line(i))) accepted++;
    assert.equal(accepted, 10);
    assert.equal(writer.stats.dropped, 90);
    const drops = records().filter((r) => r.msg === "STDIO_WRITER_DROP");
    assert.equal(drops.length, 90);
    assert.equal(drops[0]?.level, 20);
    out.release();
    assert.equal(await writer.flush(1000), true);
    assert.equal(out.text().trim().split("\n").length, 11);
  });

  it("never drops results: they wait for room and keep their order", async () => {
    const out = new RecordingStream(1);
    out.stalled = true;
    const { logger } = captureLogger();
    const writer = new OutboundWriter(out, { maxMessages: 2, logger });
    writer.offer(line(0));
    await tick();
    const pending = [1, 2, 3, 4, 5].map((id) => writer.push(line(id, "result")));
    let settled = 0;
    for (const p of pending) void p.then(() => settled++);
    await tick();
    assert.equal(settled, 2, "only two fit while the reader is stalled");
    out.release();
    await Promise.all(pending);
    assert.equal(await writer.flush(1000), true);
    const ids = out.text().trim().split("\n").map((l) => (JSON.parse(l) as { id: number }).id);
    assert.deepEqual(ids, [0, 1, 2, 3, 4, 5]);
    assert.equal(writer.stats.dropped, 0);
  });

  it("honours drain: no second write before the stream drains", async () => {
    const out = new RecordingStream(1);
    out.stalled = true;
    const { logger } = captureLogger();
    const writer = new OutboundWriter(out, { maxMessages: 100, logger });
    writer.offer(line(0));
    await tick();
    writer.offer(line(1));
    writer.offer(line(2));
    await tick();
    await tick();
    assert.equal(out.writes.length, 1);
    out.release();
    assert.equal(await writer.flush(1000), true);
    assert.equal(out.writes.length, 2, "the two queued while stalled went out as one batch");
  });

  it("busy: true while lines wait for a stalled reader, false once it drained", async () => {
    const out = new RecordingStream(1);
    out.stalled = true;
    const { logger } = captureLogger();
    const writer = new OutboundWriter(out, { maxMessages: 100, logger });
    assert.equal(writer.busy, false);
    writer.offer(line(0));
    await tick();
    assert.equal(writer.busy, true, "waiting for drain");
    out.release();
    assert.equal(await writer.flush(1000), true);
    await tick();
    assert.equal(writer.busy, false);
  });

  it("flush gives up after the timeout when the reader stays stalled", async () => {
    const out = new RecordingStream(1);
    out.stalled = true;
    const { logger } = captureLogger();
    const writer = new OutboundWriter(out, { maxMessages: 10, logger });
    await writer.push(line(1, "result"));
    const started = Date.now();
    assert.equal(await writer.flush(100), false);
    assert.ok(Date.now() - started < 1000);
    out.release();
    assert.equal(await writer.flush(1000), true);
  });

  it("after EPIPE logs once, discards output and keeps accepting without throwing", async () => {
    const out = new BrokenPipe();
    const { logger, records } = captureLogger();
    const writer = new OutboundWriter(out, { maxMessages: 10, logger });
    await writer.push(line(1, "result"));
    await tick();
    await tick();
    assert.equal(writer.stats.broken, true);
    for (let i = 0; i < 20; i++) writer.offer(line(i));
    await writer.push(line(99, "result"));
    assert.equal(await writer.flush(100), true);
    assert.equal(out.attempts, 1, "nothing is written after the failure");
    const errors = records().filter((r) => typeof r.msg === "string" && r.msg.startsWith("ERROR_STACKTRACE"));
    assert.equal(errors.length, 1);
    assert.ok(writer.stats.discarded >= 21);
  });

  it("releases results that were waiting for room when the stream breaks", async () => {
    const out = new RecordingStream(1);
    out.stalled = true;
    const { logger } = captureLogger();
    const writer = new OutboundWriter(out, { maxMessages: 1, logger });
    writer.offer(line(0));
    await tick();
    writer.offer(line(1));
    const waiting = writer.push(line(2, "result"));
    out.destroy(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    await waiting;
    assert.equal(writer.stats.broken, true);
  });
});
