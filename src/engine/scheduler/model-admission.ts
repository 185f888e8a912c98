import { RuntimeError } from "../../shared/runtime-error.js";
import type { ModelScheduler, Reservation, ScheduledModel } from "./model-scheduler.js";
import type { ModelLoadEvent } from "./scheduler-types.js";

/**
 * One model's reservation with the scheduler, for its ManagedEngine: asked for before a call
 * reaches an unloaded engine, corrected after the load, released when the model is unloaded or
 * its load failed.
 */
export class ModelAdmission {
  /** The reservation for the loaded (or loading) model; null while unloaded. */
  reservation: Reservation | null = null;
  /** Waiting in the scheduler's queue for memory. */
  queued = false;
  private admitting: Promise<Reservation> | null = null;
  private readonly listeners = new Set<(event: ModelLoadEvent) => void>();

  constructor(
    private readonly scheduler: ModelScheduler,
    private readonly model: ScheduledModel,
    private readonly loadedNow: () => boolean,
  ) {}

  /**
   * A model without a reservation asks the scheduler for one (which may unload others, or wait).
   * Concurrent callers share one admission; one whose own signal did not abort tries again when
   * the shared one was cancelled by another's. Resolves true when the model is not loaded yet:
   * the call waits for its load, so it is told `loading` (and, by the caller, `loaded`); every
   * call that waits for a load hears of it, whether it queued for memory first or not.
   */
  async admitted(signal: AbortSignal | undefined, listener: ((event: ModelLoadEvent) => void) | undefined): Promise<boolean> {
    const mine = (event: ModelLoadEvent): void => listener?.(event);
    this.listeners.add(mine);
    try {
      while (this.reservation === null) {
        if (this.admitting === null) {
          this.queued = true;
          const admitting = this.scheduler.admit(this.model, { ...(signal ? { signal } : {}), onEvent: (event) => this.tell(event) });
          this.admitting = admitting;
          admitting.then(
            (reservation) => {
              this.reservation = reservation;
              this.admitting = null;
              this.queued = false;
            },
            () => {
              this.admitting = null;
              this.queued = false;
            },
          );
        }
        try {
          await this.admitting;
        } catch (error) {
          if (error instanceof RuntimeError && error.code === "cancelled" && signal?.aborted !== true) continue;
          throw error;
        }
      }
      if (this.loadedNow()) return false;
      listener?.({ model: this.model.modelName, state: "loading" });
      return true;
    } finally {
      this.listeners.delete(mine);
    }
  }

  /** After a call that worked on the loaded model: the first after a load corrects the estimate with the engine's measured figure. */
  loaded(memoryBytes: number | undefined): void {
    const reservation = this.reservation;
    if (reservation !== null && !reservation.measured) this.scheduler.correct(reservation, memoryBytes);
  }

  /** Nothing is held (a failed load, a closed engine): the memory is free at once. */
  release(): void {
    const reservation = this.reservation;
    this.reservation = null;
    if (reservation !== null) this.scheduler.release(reservation);
  }

  /** An unload begins: the reservation still counts until the engine is closed, then the caller releases it. */
  detach(): Reservation | null {
    const reservation = this.reservation;
    this.reservation = null;
    if (reservation !== null) reservation.releasing = true;
    return reservation;
  }

  private tell(event: ModelLoadEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
