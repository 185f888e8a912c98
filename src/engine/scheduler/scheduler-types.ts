/** Bytes a model holds (or may hold) in system RAM and in GPU memory. */
export interface MemoryNeed {
  ramBytes: number;
  vramBytes: number;
}

/**
 * Why a request waits (stdio/JSON-RPC `model_load` event): queued for memory (with the idle models
 * being unloaded for it), loading, loaded.
 */
export interface ModelLoadEvent {
  model: string;
  state: "queued" | "loading" | "loaded";
  progress?: number;
  unloading?: string[];
}

/** Time for the scheduler's queue timeout (a fake one in tests). `setTimeout` returns its cancel. */
export interface SchedulerClock {
  now(): number;
  setTimeout(run: () => void, ms: number): () => void;
}
