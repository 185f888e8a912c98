/**
 * What `threads: auto` means, per engine (measured, docs/engines.md, docs/benchmarks.md; each
 * driver names its own):
 * - llama-server: every physical core. Its OpenMP pool stays alive between tokens and scales
 *   (2 cores: 230-260 tok/s at 2 threads vs 173-244 at 1 on the 84M bench model, quiet machine).
 * - embedded: one physical core fewer (at least 1), on either binary. The JS main thread and
 *   node-llama-cpp's libuv hand-offs need a core between tokens: on 2 cores even the local OpenMP
 *   build (`npm run build:embedded`) made 191 tok/s at 2 threads against 242 at 1 (quiet machine,
 *   same model). node-llama-cpp's prebuilt CPU binary is worse: without OpenMP every decode starts
 *   its helper threads anew and they meet at spinning barriers, so 2 threads gave 52-61 tok/s
 *   (quiet) and 1-10 tok/s under load.
 */
export function llamaServerAutoThreads(physicalCores: number): number {
  return Math.max(1, Math.floor(physicalCores));
}

/** The embedded engine's `threads: auto` (see llamaServerAutoThreads for why one core fewer). */
export function embeddedAutoThreads(physicalCores: number): number {
  return Math.max(1, llamaServerAutoThreads(physicalCores) - 1);
}
