import type { EngineKind } from "./engine.js";

/**
 * What `threads: auto` means, per engine (measured, docs/engines.md, docs/benchmarks.md):
 * - llama-server: every physical core. Its OpenMP pool stays alive between tokens and scales
 *   (2 cores: 230 tok/s at 2 threads vs 173 at 1 on the 84M bench model).
 * - embedded on a binary built with OpenMP (the local build of `npm run build:embedded`): every
 *   physical core, for the same reason.
 * - embedded on node-llama-cpp's prebuilt CPU binaries (no OpenMP): one physical core fewer (at
 *   least 1). Without OpenMP every decode starts its helper threads anew and they meet at
 *   spinning barriers, so a thread that loses its core stalls the token; on a 2-core machine 2
 *   threads gave 61 tok/s against 178 at 1 (quiet machine, same model), and 1-3 tok/s under load.
 */
export function autoThreads(engine: EngineKind, physicalCores: number, binary: { openmp: boolean } = { openmp: false }): number {
  const cores = Math.max(1, Math.floor(physicalCores));
  return engine === "embedded" && !binary.openmp ? Math.max(1, cores - 1) : cores;
}
