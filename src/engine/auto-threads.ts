import type { EngineKind } from "./engine.js";

/**
 * What `threads: auto` means, per engine (measured, docs/engines.md):
 * - llama-server: every physical core. Its OpenMP pool stays alive between tokens and scales
 *   (2 cores: 230 tok/s at 2 threads vs 173 at 1 on the 84M bench model).
 * - embedded: one physical core fewer (at least 1). node-llama-cpp's prebuilt CPU build starts the
 *   decode threads for every token and shares the cores with our JS main thread; on a 2-core
 *   machine 2 threads gave 61 tok/s against 178 at 1 (quiet machine, same model).
 */
export function autoThreads(engine: EngineKind, physicalCores: number): number {
  const cores = Math.max(1, Math.floor(physicalCores));
  return engine === "embedded" ? Math.max(1, cores - 1) : cores;
}
