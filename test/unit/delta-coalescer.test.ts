import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DeltaCoalescer, withCoalescedEmit, type ScheduleTimer } from "../../src/agent/delta-coalescer.js";
import type { AgentEvent } from "../../src/agent/events.js";

/** A clock the test moves by hand: timers fire only in `advance`, in order of their due time. */
class FakeClock {
  now = 0;
  private timers: Array<{ at: number; fn: () => void; live: boolean }> = [];
  readonly schedule: ScheduleTimer = (fn, ms) => {
    const timer = { at: this.now + ms, fn, live: true };
    this.timers.push(timer);
    return () => void (timer.live = false);
  };
  get live(): number {
    return this.timers.filter((t) => t.live).length;
  }
  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      const next = this.timers.filter((t) => t.live && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (next === undefined) break;
      next.live = false;
      this.now = next.at;
      next.fn();
    }
    this.now = end;
  }
}

const text = (delta: string, step = 1): AgentEvent => ({ event: "llm_chunk", step, delta });
const think = (delta: string, step = 1): AgentEvent => ({ event: "thinking_chunk", step, delta });

function harness(windowMs = 4, busy?: () => boolean): { clock: FakeClock; out: AgentEvent[]; c: DeltaCoalescer } {
  const clock = new FakeClock();
  const out: AgentEvent[] = [];
  return { clock, out, c: new DeltaCoalescer((e) => out.push(e), { windowMs, schedule: clock.schedule, ...(busy ? { busy } : {}) }) };
}

describe("DeltaCoalescer", () => {
  it("sends the first chunk of a step at once and merges the rest of the window into one", () => {
    const { clock, out, c } = harness();
    c.emit(text("Hel"));
    assert.deepEqual(out, [text("Hel")]);
    c.emit(text("lo"));
    clock.advance(1);
    c.emit(text(", "));
    clock.advance(1);
    c.emit(text("wor"));
    assert.equal(out.length, 1, "nothing leaves inside the window");
    clock.advance(2);
    assert.deepEqual(out, [text("Hel"), text("lo, wor")]);
    // Tokens keep coming: the next window merges too.
    c.emit(text("ld"));
    c.emit(text("!"));
    clock.advance(4);
    assert.deepEqual(out, [text("Hel"), text("lo, wor"), text("ld!")]);
  });

  it("after a quiet window the next delta leaves at once again, and no timer is left", () => {
    const { clock, out, c } = harness();
    c.emit(text("a"));
    clock.advance(4);
    assert.equal(clock.live, 0);
    c.emit(text("b"));
    assert.deepEqual(out, [text("a"), text("b")]);
  });

  it("flushes pending text before any other event, in order, and the next step's first chunk is immediate", () => {
    const { clock, out, c } = harness();
    c.emit({ event: "llm_start", step: 1 });
    c.emit(text("x"));
    c.emit(text("y"));
    c.emit(text("z"));
    c.emit({ event: "usage", step: 1, input_tokens: 3, output_tokens: 3 });
    c.emit({ event: "llm_done", step: 1 });
    c.emit({ event: "tool_start", step: 1, tool: "t", args: {} });
    c.emit({ event: "llm_start", step: 2 });
    c.emit(text("next", 2));
    assert.deepEqual(out, [
      { event: "llm_start", step: 1 },
      text("x"),
      text("yz"),
      { event: "usage", step: 1, input_tokens: 3, output_tokens: 3 },
      { event: "llm_done", step: 1 },
      { event: "tool_start", step: 1, tool: "t", args: {} },
      { event: "llm_start", step: 2 },
      text("next", 2),
    ]);
    clock.advance(10);
    assert.equal(out.length, 8);
  });

  it("coalesces thinking separately from text; a switch flushes", () => {
    const { clock, out, c } = harness();
    c.emit(think("hmm"));
    c.emit(think(" ok"));
    c.emit(text("A"));
    c.emit(text("B"));
    c.emit(think("again"));
    c.emit(think("!"));
    clock.advance(4);
    assert.deepEqual(out, [think("hmm"), think(" ok"), text("A"), text("B"), think("again"), think("!")]);
  });

  it("a chunk of another step is never merged with the previous step's text", () => {
    const { out, c } = harness();
    c.emit(text("a", 1));
    c.emit(text("b", 1));
    c.emit(text("c", 2));
    assert.deepEqual(out, [text("a", 1), text("b", 1), text("c", 2)]);
  });

  it("close() sends pending text, clears the timer, and lets later events through unmerged", () => {
    const { clock, out, c } = harness();
    c.emit(text("a"));
    c.emit(text("b"));
    c.close();
    assert.deepEqual(out, [text("a"), text("b")]);
    assert.equal(clock.live, 0);
    c.emit(text("c"));
    c.emit(text("d"));
    assert.deepEqual(out, [text("a"), text("b"), text("c"), text("d")]);
  });

  it("while the output is backed up, pending text waits past the window; other events still flush it", () => {
    let busy = true;
    const { clock, out, c } = harness(4, () => busy);
    c.emit(text("a"));
    c.emit(text("b"));
    clock.advance(4);
    c.emit(text("c"));
    clock.advance(4);
    assert.deepEqual(out, [text("a")], "held while busy");
    busy = false;
    clock.advance(4);
    assert.deepEqual(out, [text("a"), text("bc")]);
    busy = true;
    c.emit(text("d"));
    c.emit({ event: "llm_done", step: 1 });
    assert.deepEqual(out, [text("a"), text("bc"), text("d"), { event: "llm_done", step: 1 }]);
    assert.equal(clock.live, 0);
  });

  it("a sink that throws on a timer flush fails the turn at its next emit, never the process", () => {
    const clock = new FakeClock();
    const c = new DeltaCoalescer((e) => {
      if (e.event === "llm_chunk" && e.delta === "bc") throw new Error("sink broke");
    }, { windowMs: 4, schedule: clock.schedule });
    c.emit(text("a"));
    c.emit(text("b"));
    c.emit(text("c"));
    clock.advance(4);
    assert.throws(() => c.emit(text("d")), /sink broke/);
    assert.equal(clock.live, 0);
  });

  it("window 0 is exactly the unmerged stream", () => {
    const { clock, out, c } = harness(0);
    const events = [text("a"), text("b"), think("t"), text("c")];
    events.forEach((e) => c.emit(e));
    assert.deepEqual(out, events);
    assert.equal(clock.live, 0);
  });

  it("the concatenated text is unchanged over a long random stream", () => {
    const { clock, out, c } = harness(3);
    let sent = "";
    let seed = 7;
    const rand = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 2000; i++) {
      const delta = String.fromCharCode(97 + (i % 26));
      sent += delta;
      c.emit(text(delta));
      clock.advance(rand() * 1.5);
    }
    c.close();
    const received = out.map((e) => (e.event === "llm_chunk" ? e.delta : "")).join("");
    assert.equal(received, sent);
    assert.ok(out.length < 2000 / 3, `${out.length} events for 2000 deltas`);
  });
});

describe("withCoalescedEmit", () => {
  it("flushes pending text before the turn's result is seen", async () => {
    const clock = new FakeClock();
    const out: AgentEvent[] = [];
    const result = await withCoalescedEmit((e) => out.push(e), { windowMs: 4, schedule: clock.schedule }, async (emit) => {
      emit(text("a"));
      emit(text("b"));
      emit(text("c"));
      return out.length;
    });
    assert.equal(result, 1, "inside the turn only the first chunk had left");
    assert.deepEqual(out, [text("a"), text("bc")]);
    assert.equal(clock.live, 0);
  });

  it("on cancel, the text generated before the abort leaves before the error, nothing after", async () => {
    const clock = new FakeClock();
    const out: Array<AgentEvent | { event: "error" }> = [];
    const controller = new AbortController();
    const turn = withCoalescedEmit((e) => out.push(e), { windowMs: 4, schedule: clock.schedule }, async (emit) => {
      emit(text("a"));
      emit(text("b"));
      controller.abort("cancelled");
      throw new Error("cancelled");
    });
    await assert.rejects(turn, /cancelled/);
    out.push({ event: "error" });
    clock.advance(100);
    assert.deepEqual(out, [text("a"), text("b"), { event: "error" }]);
    assert.equal(clock.live, 0);
  });

  it("with real timers, pending text leaves when the window elapses and the timer does not hold the loop", async () => {
    const out: AgentEvent[] = [];
    let flushed = (): void => undefined;
    const second = new Promise<void>((resolve) => (flushed = resolve));
    const c = new DeltaCoalescer(
      (e) => {
        out.push(e);
        if (out.length === 2) flushed();
      },
      { windowMs: 5 },
    );
    c.emit(text("a"));
    c.emit(text("b"));
    // The first delta leaves at once, the second when the window's timer fires.
    assert.deepEqual(out, [text("a")]);
    await second;
    assert.deepEqual(out, [text("a"), text("b")]);
    c.close();
  });

  it("0 runs the turn with the given emit itself", async () => {
    const emit = (): void => undefined;
    await withCoalescedEmit(emit, { windowMs: 0 }, async (given) => assert.equal(given, emit));
  });
});
