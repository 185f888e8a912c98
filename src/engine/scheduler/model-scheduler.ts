import type { Logger } from "pino";
import type { MetricsRecorder } from "../../shared/metrics-recorder.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import { fitsBeside, tooLarge } from "./scheduler-fit.js";
import type { MemoryNeed, ModelLoadEvent, SchedulerClock } from "./scheduler-types.js";

/** What the scheduler needs of a model (a ManagedEngine). */
export interface ScheduledModel {
  readonly modelName: string;
  /** Requests running on it now: a model with any is never unloaded. */
  readonly inFlight: number;
  /** When its last request began or ended (clock ms): least recently used goes first. */
  readonly lastUsedAt: number;
  readonly pinned: boolean;
  /** Unloads it to make room; resolves false (or throws busy) when it could not. Releases its reservation itself. */
  evict(reason: string): Promise<boolean>;
}

/** The memory one load holds in the accounting, from admit() until release(). */
export interface Reservation {
  readonly model: ScheduledModel;
  need: MemoryNeed;
  /** True once corrected from the engine's measured figure after the load. */
  measured: boolean;
  /** Set when its model is being unloaded: it still counts (the memory is not free yet) but is no eviction candidate. */
  releasing: boolean;
}

export interface SchedulerDeps {
  /** The budget (resolved once: `auto` reads what is free at startup). */
  budget(): Promise<MemoryNeed>;
  /** A model's need for its configured context, GPU layers and sequences (plan's estimate). */
  estimate(model: string): Promise<MemoryNeed>;
  queue: { length: number; timeoutMs: number };
  logger: Logger;
  clock?: SchedulerClock;
  /** Each admission's wait in the queue (local_ai_queue_wait_seconds). */
  metrics?: MetricsRecorder;
}

export interface AdmitOptions {
  signal?: AbortSignal;
  onEvent?: (event: ModelLoadEvent) => void;
}

interface Waiter {
  model: ScheduledModel;
  need: MemoryNeed;
  options: AdmitOptions;
  /** Clock ms when it joined the queue. */
  queuedAt: number;
  resolve(reservation: Reservation): void;
  reject(error: Error): void;
  cleanup(): void;
  /** The names the last queued event listed (an event goes out when they change). */
  told?: string;
}

const realClock: SchedulerClock = {
  now: () => Date.now(),
  setTimeout: (run, ms) => {
    const timer = setTimeout(run, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/**
 * Decides which models are loaded under one memory budget. A load is admitted when its estimate
 * fits beside what is reserved; otherwise idle, unpinned models are evicted least recently used
 * first; when even that cannot make room (the rest are busy or pinned), the load waits in a
 * bounded FIFO queue for models to become idle, and fails with `busy` past its timeout. A model
 * that could not fit even alone is refused with `model_too_large` before anything is unloaded.
 */
export class ModelScheduler {
  private readonly reservations = new Set<Reservation>();
  private readonly queue: Waiter[] = [];
  private readonly clock: SchedulerClock;
  private pumping = false;
  private again = false;
  private resolvedBudget: MemoryNeed | null = null;
  /** A model's need as measured at its last load, where larger than the estimate: the next load counts it from the start. */
  private readonly learned = new Map<string, MemoryNeed>();

  constructor(private readonly deps: SchedulerDeps) {
    this.clock = deps.clock ?? realClock;
  }

  /** The budget once known (after the first admit, or budgetNow()). */
  async budgetNow(): Promise<MemoryNeed> {
    this.resolvedBudget ??= await this.deps.budget();
    return this.resolvedBudget;
  }

  /** The budget if already resolved (null before the first load), without waiting. */
  budgetIfKnown(): MemoryNeed | null {
    return this.resolvedBudget;
  }

  /** What the reservations hold together. */
  used(): MemoryNeed {
    let ramBytes = 0;
    let vramBytes = 0;
    for (const reservation of this.reservations) {
      ramBytes += reservation.need.ramBytes;
      vramBytes += reservation.need.vramBytes;
    }
    return { ramBytes, vramBytes };
  }

  /** The current reservation of a model (the newest when one is still being released). */
  reservationOf(name: string): Reservation | undefined {
    let found: Reservation | undefined;
    for (const reservation of this.reservations) if (reservation.model.modelName === name && !reservation.releasing) found = reservation;
    return found;
  }

  /** Names of models waiting in the queue. */
  queued(): string[] {
    return this.queue.map((waiter) => waiter.model.modelName);
  }

  /** Reserves memory for loading `model`; evicts or waits as needed. Throws model_too_large, busy, cancelled. */
  async admit(model: ScheduledModel, options: AdmitOptions = {}): Promise<Reservation> {
    const [budget, estimate] = await Promise.all([this.budgetNow(), this.deps.estimate(model.modelName)]);
    const known = this.learned.get(model.modelName);
    const need = known === undefined ? estimate : { ramBytes: Math.max(estimate.ramBytes, known.ramBytes), vramBytes: Math.max(estimate.vramBytes, known.vramBytes) };
    if (need.ramBytes > budget.ramBytes || need.vramBytes > budget.vramBytes) throw tooLarge(model.modelName, need, budget);
    // A RuntimeError, not the raw abort reason: callers sharing this admission retry on `cancelled` (ModelAdmission).
    if (options.signal?.aborted === true) throw new RuntimeError("cancelled", "Request cancelled while its model waited to load");
    if (this.queue.length >= this.deps.queue.length) {
      throw new RuntimeError("busy", `${this.queue.length} model loads are waiting for memory already (llama.load_queue.length); try again when a model is idle`, {
        details: { model: model.modelName, queued: this.queued(), models_in_use: this.inUse() },
      });
    }
    return new Promise<Reservation>((resolve, reject) => {
      const started = this.clock.now();
      const cancelTimer = this.clock.setTimeout(() => {
        const inUse = this.inUse();
        const waited = Math.round((this.clock.now() - started) / 1000);
        fail(
          new RuntimeError("busy", `Model "${model.modelName}" waited ${waited} s for memory (llama.load_queue.timeout_s) while ${inUse.length > 0 ? inUse.join(", ") : "other models"} ${inUse.length === 1 ? "was" : "were"} in use; try again later`, {
            details: { model: model.modelName, models_in_use: inUse, waited_s: waited },
          }),
        );
      }, this.deps.queue.timeoutMs);
      const onAbort = (): void => fail(new RuntimeError("cancelled", "Request cancelled while its model waited to load"));
      options.signal?.addEventListener("abort", onAbort, { once: true });
      const waiter: Waiter = {
        model,
        need,
        options,
        queuedAt: started,
        resolve,
        reject,
        cleanup: () => {
          cancelTimer();
          options.signal?.removeEventListener("abort", onAbort);
        },
      };
      const fail = (error: Error): void => {
        const index = this.queue.indexOf(waiter);
        if (index < 0) return;
        this.queue.splice(index, 1);
        waiter.cleanup();
        reject(error);
        // The head may have changed: the next one may fit now.
        this.pump();
      };
      this.queue.push(waiter);
      this.pump();
    });
  }

  /** The model's memory is free again (unloaded, or its load failed). */
  release(reservation: Reservation): void {
    if (this.reservations.delete(reservation)) this.pump();
  }

  /** After a load: the engine's measured figure replaces the estimate where it is larger. */
  correct(reservation: Reservation, measuredBytes: number | undefined): void {
    if (measuredBytes === undefined || !this.reservations.has(reservation)) return;
    const estimated = reservation.need.ramBytes + reservation.need.vramBytes;
    reservation.measured = true;
    if (measuredBytes <= estimated) return;
    // The measured figure does not say where the excess lives: count it where most of the model is.
    const excess = measuredBytes - estimated;
    const need = reservation.need;
    reservation.need = need.vramBytes > need.ramBytes ? { ...need, vramBytes: need.vramBytes + excess } : { ...need, ramBytes: need.ramBytes + excess };
    this.learned.set(reservation.model.modelName, reservation.need);
    this.deps.logger.info({ model: reservation.model.modelName, estimated_bytes: estimated, measured_bytes: measuredBytes }, "model needs more memory than estimated; accounting corrected");
    void this.shrink();
  }

  /** After a correction pushed the accounting past the budget: idle models go, least recently used first. */
  private async shrink(): Promise<void> {
    const budget = await this.budgetNow();
    const used = this.used();
    if (fitsBeside({ ramBytes: 0, vramBytes: 0 }, used, budget)) return;
    const victims = this.victimsFor({ ramBytes: 0, vramBytes: 0 }, used, budget) ?? [];
    for (const victim of victims) {
      await victim.model.evict("over the memory budget after a measured load").catch((error: unknown) => this.deps.logger.info({ model: victim.model.modelName, err: error }, "model not unloaded: in use again"));
    }
  }

  /** A request on some model ended: a waiting load may now evict it. */
  idle(): void {
    if (this.queue.length > 0) this.pump();
  }

  private inUse(): string[] {
    const names = new Set<string>();
    for (const reservation of this.reservations) if (reservation.model.inFlight > 0) names.add(reservation.model.modelName);
    return [...names];
  }

  /** One pass at a time: evictions are awaited before the queue is looked at again. */
  private pump(): void {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.drain().finally(() => {
      this.pumping = false;
      if (this.again) {
        this.again = false;
        this.pump();
      }
    });
  }

  private async drain(): Promise<void> {
    const budget = await this.budgetNow();
    for (;;) {
      const head = this.queue[0];
      if (head === undefined) return;
      const used = this.used();
      if (fitsBeside(head.need, used, budget)) {
        this.queue.shift();
        head.cleanup();
        const reservation: Reservation = { model: head.model, need: head.need, measured: false, releasing: false };
        this.reservations.add(reservation);
        const now = this.used();
        this.deps.logger.info(
          { model: head.model.modelName, need_ram_bytes: head.need.ramBytes, need_vram_bytes: head.need.vramBytes, used_ram_bytes: now.ramBytes, used_vram_bytes: now.vramBytes, budget_ram_bytes: budget.ramBytes, budget_vram_bytes: budget.vramBytes },
          "model load admitted",
        );
        this.deps.metrics?.queueWait(head.model.modelName, (this.clock.now() - head.queuedAt) / 1000);
        head.resolve(reservation);
        continue;
      }
      const victims = this.victimsFor(head.need, used, budget);
      if (victims === null) {
        this.tellQueued(head, []);
        return;
      }
      const names = victims.map((victim) => victim.model.modelName);
      this.tellQueued(head, names);
      this.deps.logger.info({ model: head.model.modelName, unloading: names }, "unloading idle models to make room");
      const results = await Promise.allSettled(victims.map((victim) => victim.model.evict(`making room for ${head.model.modelName}`)));
      // A victim that got a request meanwhile refused (busy): the next pass finds another way or waits.
      for (const [index, result] of results.entries()) {
        if (result.status === "rejected") this.deps.logger.info({ model: names[index], err: result.reason }, "model not unloaded: in use again");
      }
    }
  }

  /** Idle, unpinned reservations, least recently used first, that free enough; null when none do. */
  private victimsFor(need: MemoryNeed, used: MemoryNeed, budget: MemoryNeed): Reservation[] | null {
    const candidates = [...this.reservations]
      .filter((reservation) => !reservation.releasing && !reservation.model.pinned && reservation.model.inFlight === 0)
      .sort((a, b) => a.model.lastUsedAt - b.model.lastUsedAt);
    const chosen: Reservation[] = [];
    let left = used;
    for (const candidate of candidates) {
      chosen.push(candidate);
      left = { ramBytes: left.ramBytes - candidate.need.ramBytes, vramBytes: left.vramBytes - candidate.need.vramBytes };
      if (fitsBeside(need, left, budget)) return chosen;
    }
    return null;
  }

  private tellQueued(waiter: Waiter, unloading: string[]): void {
    const key = unloading.join("\n");
    if (waiter.told === key) return;
    waiter.told = key;
    waiter.options.onEvent?.({ model: waiter.model.modelName, state: "queued", ...(unloading.length > 0 ? { unloading } : {}) });
  }
}
