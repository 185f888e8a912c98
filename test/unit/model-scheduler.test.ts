import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pino } from "pino";
import type { EngineChunk, GenerateRequest } from "../../src/engine/chat-types.js";
import type { Engine, EngineHealth } from "../../src/engine/engine.js";
import { ManagedEngine } from "../../src/engine/scheduler/managed-engine.js";
import { ModelScheduler } from "../../src/engine/scheduler/model-scheduler.js";
import type { MemoryNeed, ModelLoadEvent, SchedulerClock } from "../../src/engine/scheduler/scheduler-types.js";
import { isRuntimeError, RuntimeError } from "../../src/shared/runtime-error.js";
import { PromMetrics } from "../../src/app/metrics/prom-metrics.js";
import type { MetricsRecorder } from "../../src/shared/metrics-recorder.js";

/**
 * The scheduler's logic against engines the test drives (the real engines under a budget are in
 * test/e2e/model-scheduler.test.ts): a generation loads the model, then runs until `finish()`.
 */
class FakeEngine implements Engine {
  readonly kind = "embedded";
  readonly capabilities = { images: false, requiredToolChoice: false };
  loaded = false;
  loads = 0;
  closes = 0;
  private readonly holds: Array<() => void> = [];

  constructor(
    readonly modelName: string,
    private readonly failLoad = false,
  ) {}

  async warmUp(): Promise<void> {
    if (this.loaded) return;
    this.loads += 1;
    if (this.failLoad) throw new RuntimeError("engine_unavailable", "out of memory while loading");
    this.loaded = true;
  }

  health(): EngineHealth {
    return this.loaded ? { state: "ready", degradationTier: "NORMAL" } : { state: "stopped", degradationTier: "NORMAL" };
  }

  generate(_request: GenerateRequest): AsyncIterable<EngineChunk> {
    const load = (): Promise<void> => this.warmUp();
    const wait = new Promise<void>((resolve) => this.holds.push(resolve));
    return (async function* () {
      await load();
      yield { type: "text", delta: "started" };
      await wait;
      yield { type: "end", finishReason: "stop" };
    })();
  }

  finish(): void {
    for (const release of this.holds.splice(0)) release();
  }

  async close(): Promise<void> {
    this.closes += 1;
    this.loaded = false;
  }
}

/** Time that moves only when the test says so. */
class FakeClock implements SchedulerClock {
  private time = 0;
  private timers: Array<{ at: number; run: () => void }> = [];
  now(): number {
    return this.time;
  }
  setTimeout(run: () => void, ms: number): () => void {
    const timer = { at: this.time + ms, run };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((other) => other !== timer);
    };
  }
  advance(ms: number): void {
    this.time += ms;
    const due = this.timers.filter((timer) => timer.at <= this.time);
    this.timers = this.timers.filter((timer) => timer.at > this.time);
    for (const timer of due) timer.run();
  }
}

const logger = pino({ level: "silent" });

interface Harness {
  scheduler: ModelScheduler;
  clock: FakeClock;
  engines: Map<string, { managed: ManagedEngine; made: FakeEngine[] }>;
  model(name: string): ManagedEngine;
  /** The engine now inside the model (the latest one made). */
  inner(name: string): FakeEngine;
}

function harness(needs: Record<string, number>, options: { budget?: number; pinned?: string[]; failing?: string[]; queueLength?: number; metrics?: MetricsRecorder } = {}): Harness {
  const clock = new FakeClock();
  const budget: MemoryNeed = { ramBytes: options.budget ?? 200, vramBytes: 0 };
  const scheduler = new ModelScheduler({
    budget: async () => budget,
    estimate: async (name) => ({ ramBytes: needs[name] ?? 0, vramBytes: 0 }),
    queue: { length: options.queueLength ?? 8, timeoutMs: 30_000 },
    logger,
    clock,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  const engines = new Map<string, { managed: ManagedEngine; made: FakeEngine[] }>();
  for (const name of Object.keys(needs)) {
    const made: FakeEngine[] = [];
    const make = (): FakeEngine => {
      const engine = new FakeEngine(name, options.failing?.includes(name) ?? false);
      made.push(engine);
      return engine;
    };
    const managed = new ManagedEngine(make(), async () => make(), { idleUnloadMs: null, logger, scheduler, pinned: options.pinned?.includes(name) ?? false, ...(options.metrics ? { metrics: options.metrics } : {}) });
    engines.set(name, { managed, made });
  }
  const entry = (name: string): { managed: ManagedEngine; made: FakeEngine[] } => {
    const found = engines.get(name);
    assert.ok(found, name);
    return found;
  };
  return { scheduler, clock, engines, model: (name) => entry(name).managed, inner: (name) => entry(name).made.at(-1) as FakeEngine };
}

/** Starts a generation and resolves once the model answered its first chunk (it is loaded and busy). */
async function start(model: ManagedEngine, onModelLoad?: (event: ModelLoadEvent) => void): Promise<{ done: Promise<void> }> {
  const iterator = model.generate({ messages: [], ...(onModelLoad ? { onModelLoad } : {}) } as unknown as GenerateRequest)[Symbol.asyncIterator]();
  const first = await iterator.next();
  assert.equal(first.done, false);
  const done = (async () => {
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next());
  })();
  return { done };
}

/** Loads the model with a generation that finishes at once. */
async function use(h: Harness, name: string): Promise<void> {
  const running = await start(h.model(name));
  h.inner(name).finish();
  await running.done;
}

/** The model_load events of one request, and a promise per state. */
function recorder(): { events: ModelLoadEvent[]; listener: (event: ModelLoadEvent) => void; when(state: ModelLoadEvent["state"]): Promise<void> } {
  const events: ModelLoadEvent[] = [];
  const waiting: Array<{ state: ModelLoadEvent["state"]; resolve: () => void }> = [];
  return {
    events,
    listener: (event) => {
      events.push(event);
      for (const wait of waiting.filter((entry) => entry.state === event.state)) wait.resolve();
    },
    when: (state) => (events.some((event) => event.state === state) ? Promise.resolve() : new Promise((resolve) => waiting.push({ state, resolve }))),
  };
}

const loadedNames = (h: Harness): string[] => [...h.engines].filter(([, entry]) => entry.managed.accounted() !== null).map(([name]) => name);

describe("ModelScheduler", () => {
  it("loads A and B within the budget, then unloads A (least recently used) for C", async () => {
    const h = harness({ a: 100, b: 100, c: 100 });
    await use(h, "a");
    await use(h, "b");
    assert.deepEqual(h.scheduler.used(), { ramBytes: 200, vramBytes: 0 });
    await use(h, "c");
    assert.deepEqual(loadedNames(h), ["b", "c"]);
    assert.equal(h.engines.get("a")?.made[0]?.closes, 1, "A's engine was closed");
    assert.equal(h.engines.get("b")?.made[0]?.closes, 0);
    assert.deepEqual(h.scheduler.used(), { ramBytes: 200, vramBytes: 0 });
    // Using A again now unloads B, the least recently used of the two.
    await use(h, "a");
    assert.deepEqual(loadedNames(h), ["a", "c"]);
  });

  it("never unloads a model with a request running: the new load waits (queued event), then evicts it once idle", async () => {
    const h = harness({ a: 100, b: 100, c: 100 });
    const onA = await start(h.model("a"));
    const onB = await start(h.model("b"));
    const c = recorder();
    const onC = start(h.model("c"), c.listener);
    await c.when("queued");
    assert.deepEqual(c.events, [{ model: "c", state: "queued" }]);
    assert.equal(h.model("c").queued, true);
    assert.deepEqual(h.scheduler.queued(), ["c"]);
    assert.equal(h.inner("a").closes + h.inner("b").closes, 0, "nothing unloaded under a running request");
    // B finishes: it is idle now, so C's load unloads it (not A, which still runs).
    h.inner("b").finish();
    await onB.done;
    const running = await onC;
    assert.deepEqual(c.events, [{ model: "c", state: "queued" }, { model: "c", state: "queued", unloading: ["b"] }, { model: "c", state: "loading" }, { model: "c", state: "loaded" }]);
    h.inner("c").finish();
    await running.done;
    assert.equal(h.engines.get("b")?.made[0]?.closes, 1);
    assert.equal(h.inner("a").closes, 0);
    h.inner("a").finish();
    await onA.done;
    assert.deepEqual(loadedNames(h).sort(), ["a", "c"]);
    assert.ok(h.scheduler.used().ramBytes <= 200);
  });

  it("reports each admission's wait in the queue (clock time) and each load, to the metrics", async () => {
    const metrics = new PromMetrics(() => null);
    const h = harness({ a: 150, b: 150 }, { metrics });
    const onA = await start(h.model("a"));
    const b = recorder();
    const onB = start(h.model("b"), b.listener);
    await b.when("queued");
    h.clock.advance(4_500);
    h.inner("a").finish();
    await onA.done;
    const running = await onB;
    h.inner("b").finish();
    await running.done;
    // A second use of a loaded model is no load and no wait.
    await use(h, "b");
    const sample = async (name: string, model: string): Promise<number | undefined> =>
      (await metrics.snapshot()).metrics.flatMap((series) => series.samples).find((found) => found.name === name && found.labels.model === model)?.value;
    assert.equal(await sample("local_ai_queue_wait_seconds_count", "a"), 1);
    assert.equal(await sample("local_ai_queue_wait_seconds_sum", "a"), 0);
    assert.equal(await sample("local_ai_queue_wait_seconds_count", "b"), 1);
    assert.equal(await sample("local_ai_queue_wait_seconds_sum", "b"), 4.5);
    assert.equal(await sample("local_ai_model_load_seconds_count", "a"), 1);
    assert.equal(await sample("local_ai_model_load_seconds_count", "b"), 1);
  });

  it("names the models being unloaded in the queued event when idle ones make room", async () => {
    const h = harness({ a: 100, b: 100, c: 200 });
    await use(h, "a");
    await use(h, "b");
    await use(h, "c");
    const a = recorder();
    const running = await start(h.model("a"), a.listener);
    h.inner("a").finish();
    await running.done;
    assert.deepEqual(a.events, [{ model: "a", state: "queued", unloading: ["c"] }, { model: "a", state: "loading" }, { model: "a", state: "loaded" }]);
  });

  it("tells a load with room to spare loading and loaded (never queued); a call on the loaded model hears nothing", async () => {
    const h = harness({ a: 100 });
    const a = recorder();
    const running = await start(h.model("a"), a.listener);
    h.inner("a").finish();
    await running.done;
    assert.deepEqual(a.events, [{ model: "a", state: "loading" }, { model: "a", state: "loaded" }]);
    const again = recorder();
    const next = await start(h.model("a"), again.listener);
    h.inner("a").finish();
    await next.done;
    assert.deepEqual(again.events, []);
  });

  it("keeps a pinned model loaded and unloads the unpinned one instead, though it was used later", async () => {
    const h = harness({ a: 100, b: 100, c: 100 }, { pinned: ["a"] });
    await use(h, "a");
    await use(h, "b");
    await use(h, "c");
    assert.deepEqual(loadedNames(h), ["a", "c"]);
    assert.equal(h.inner("a").closes, 0);
  });

  it("refuses a model bigger than the whole budget with model_too_large before loading anything", async () => {
    const h = harness({ a: 100, huge: 300 });
    await use(h, "a");
    await assert.rejects(start(h.model("huge")), (error: unknown) => {
      assert.ok(isRuntimeError(error));
      assert.equal(error.code, "model_too_large");
      assert.match(error.message, /needs 300 B of RAM, more than the whole budget of 200 B/);
      assert.deepEqual(error.details?.need, { ram_bytes: 300, vram_bytes: 0 });
      assert.deepEqual(error.details?.budget, { ram_bytes: 200, vram_bytes: 0 });
      return true;
    });
    assert.equal(h.inner("huge").loads, 0, "never loaded");
    assert.equal(h.inner("a").closes, 0, "nothing unloaded for it");
    assert.deepEqual(loadedNames(h), ["a"]);
  });

  it("fails a queued load with busy naming the models in use after load_queue.timeout_s", async () => {
    const h = harness({ a: 100, b: 100, c: 100 });
    const onA = await start(h.model("a"));
    const onB = await start(h.model("b"));
    const c = recorder();
    let timedOut = false;
    const refused = assert
        .rejects(start(h.model("c"), c.listener), (error: unknown) => {
          assert.ok(isRuntimeError(error));
          assert.equal(error.code, "busy");
          assert.deepEqual(error.details, { model: "c", models_in_use: ["a", "b"], waited_s: 30 });
          assert.match(error.message, /waited 30 s for memory .* while a, b were in use/);
          return true;
        })
        .then(() => (timedOut = true));
    await c.when("queued");
    h.clock.advance(29_999);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(timedOut, false);
    h.clock.advance(1);
    await refused;
    assert.equal(timedOut, true);
    assert.deepEqual(h.scheduler.queued(), []);
    assert.equal(h.inner("c").loads, 0);
    h.inner("a").finish();
    h.inner("b").finish();
    await Promise.all([onA.done, onB.done]);
    assert.deepEqual(loadedNames(h), ["a", "b"], "the accounting is unchanged");
  });

  it("refuses with busy at once when the queue is full", async () => {
    const h = harness({ a: 100, b: 100, c: 100, d: 100 }, { queueLength: 1 });
    const onA = await start(h.model("a"));
    const onB = await start(h.model("b"));
    const c = recorder();
    const onC = start(h.model("c"), c.listener);
    await c.when("queued");
    await assert.rejects(start(h.model("d")), (error: unknown) => isRuntimeError(error) && error.code === "busy" && /1 model loads are waiting/.test(error.message));
    h.inner("a").finish();
    h.inner("b").finish();
    await Promise.all([onA.done, onB.done]);
    const running = await onC;
    h.inner("c").finish();
    await running.done;
  });

  it("gives the memory back when a load fails, so another model can load", async () => {
    const h = harness({ bad: 150, b: 100 }, { failing: ["bad"] });
    await assert.rejects(start(h.model("bad")), (error: unknown) => isRuntimeError(error) && error.code === "engine_unavailable");
    assert.deepEqual(h.scheduler.used(), { ramBytes: 0, vramBytes: 0 });
    assert.equal(h.model("bad").accounted(), null);
    await use(h, "b");
    assert.deepEqual(h.scheduler.used(), { ramBytes: 100, vramBytes: 0 });
  });

  it("cancels a queued load when its request is aborted, leaving the queue empty", async () => {
    const h = harness({ a: 100, b: 100, c: 100 });
    const onA = await start(h.model("a"));
    const onB = await start(h.model("b"));
    const controller = new AbortController();
    const c = recorder();
    const stream = h.model("c").generate({ messages: [], signal: controller.signal, onModelLoad: c.listener } as unknown as GenerateRequest);
    const cancelled = assert.rejects(
      (async () => {
        for await (const chunk of stream) void chunk;
      })(),
      (error: unknown) => isRuntimeError(error) && error.code === "cancelled",
    );
    await c.when("queued");
    controller.abort();
    await cancelled;
    assert.deepEqual(h.scheduler.queued(), []);
    h.inner("a").finish();
    h.inner("b").finish();
    await Promise.all([onA.done, onB.done]);
  });

  it("a request that leaves while the admission it shares is being estimated fails alone (cancelled); the one sharing it loads", async () => {
    const h = harness({ a: 100 });
    const controller = new AbortController();
    const leaving = h.model("a").generate({ messages: [], signal: controller.signal } as unknown as GenerateRequest)[Symbol.asyncIterator]();
    // The first call starts the admission (the scheduler is estimating), the second shares it, then the first leaves.
    const left = assert.rejects(leaving.next(), (error: unknown) => isRuntimeError(error) && error.code === "cancelled");
    const staying = start(h.model("a"));
    controller.abort("client disconnected");
    await left;
    const running = await staying;
    h.inner("a").finish();
    await running.done;
    assert.deepEqual(h.scheduler.used(), { ramBytes: 100, vramBytes: 0 });
  });

  it("corrects the estimate upward from the measured figure after the load", async () => {
    const h = harness({ a: 100 });
    await use(h, "a");
    const reservation = h.model("a").accounted();
    assert.ok(reservation);
    h.scheduler.correct(reservation, 160);
    assert.deepEqual(h.scheduler.used(), { ramBytes: 160, vramBytes: 0 });
    assert.equal(reservation.measured, true);
    h.scheduler.correct(reservation, 120);
    assert.deepEqual(h.scheduler.used(), { ramBytes: 160, vramBytes: 0 }, "never corrected downward");
  });

  it("counts a model's measured figure from its previous load the next time it loads", async () => {
    const h = harness({ a: 50, b: 100 });
    await use(h, "a");
    const first = h.model("a").accounted();
    assert.ok(first);
    h.scheduler.correct(first, 120);
    await h.model("a").unload();
    assert.deepEqual(h.scheduler.used(), { ramBytes: 0, vramBytes: 0 });
    await use(h, "b");
    // 120 (learned) + 100 > 200: B is unloaded before A loads, though A's estimate (50) would fit.
    await use(h, "a");
    assert.deepEqual(loadedNames(h), ["a"]);
    assert.deepEqual(h.scheduler.used(), { ramBytes: 120, vramBytes: 0 });
  });

  it("unloads idle models when a measured figure pushes the accounting past the budget", async () => {
    const h = harness({ a: 100, b: 80 });
    await use(h, "a");
    await use(h, "b");
    const reservation = h.model("b").accounted();
    assert.ok(reservation);
    const aEngine = h.inner("a");
    h.scheduler.correct(reservation, 150);
    for (let spins = 0; spins < 20 && aEngine.closes === 0; spins += 1) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(aEngine.closes, 1, "A, idle, was unloaded");
    assert.deepEqual(h.scheduler.used(), { ramBytes: 150, vramBytes: 0 });
  });
});
