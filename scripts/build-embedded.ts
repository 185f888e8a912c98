import { performance } from "node:perf_hooks";
import { findExecutable } from "../src/shared/process/find-executable.js";
import { embeddedBinaryOf, findLocalBuild, LOCAL_BUILD_CMAKE_OPTIONS } from "../src/engine/llama-binary.js";
import { openMpSetup } from "./openmp-on-macos.js";

/**
 * `npm run build:embedded` (optional): builds node-llama-cpp's bundled llama.cpp on this machine
 * with OpenMP and `-march=native`, through node-llama-cpp's own source build (`getLlama` with
 * `build: "forceRebuild"`, cmake-js with the Node-API headers it ships: nothing is downloaded; the
 * source is the git bundle inside the package). The result lands in node-llama-cpp's
 * `llama/localBuilds/<name after the cmake options>`, where only a `getLlama` given the same
 * options looks, so nothing else changes until the embedded engine (with
 * `llama.embedded_binary: auto`, the default) picks it up. See docs/engines.md.
 *
 * Idempotent: a finished build that loads is kept (`--force` builds again). stdout: one line, the
 * build folder; progress and compiler output go to stderr. Exit 1 with the reason on failure.
 */

const log = (line: string): void => void process.stderr.write(`[build-embedded] ${line}\n`);
const force = process.argv.includes("--force") || process.env.EMBEDDED_FORCE_REBUILD === "1";

async function main(): Promise<number> {
  const { getLlama, LlamaLogLevel } = await import("node-llama-cpp");
  const existing = await findLocalBuild();
  if (existing !== null && !force) {
    const llama = await getLlama({ build: "never", gpu: false, cmakeOptions: { ...LOCAL_BUILD_CMAKE_OPTIONS }, logLevel: LlamaLogLevel.error, progressLogs: false });
    const binary = embeddedBinaryOf(llama);
    await llama.dispose();
    if (binary.kind === "local" && binary.openmp) {
      log(`already built (${existing.builtAt.toISOString()}); --force builds it again`);
      process.stdout.write(`${existing.dir}\n`);
      return 0;
    }
    log("the existing local build does not load with OpenMP; building it again");
  }
  const openMp = openMpSetup(process.platform);
  if (!openMp.ok) {
    log(openMp.reason);
    return 1;
  }
  // CMake's FindOpenMP looks under <Package>_ROOT: Homebrew's libomp is keg-only (not on the default paths).
  if (openMp.root !== null) process.env.OpenMP_ROOT = openMp.root;
  for (const tool of ["cmake", "c++"]) {
    const found = await findExecutable(tool, process.env);
    if (!found.found) {
      log(`${tool} is not on PATH: install cmake (>= 3.19) and a C++ compiler (Debian/Ubuntu: apt-get install cmake g++), then run this again`);
      return 1;
    }
  }
  log(`building llama.cpp with ${Object.entries(LOCAL_BUILD_CMAKE_OPTIONS).map(([key, value]) => `${key}=${value}`).join(" ")} (CPU only); this takes 15-50 minutes on 2 cores`);
  const started = performance.now();
  const llama = await getLlama({
    build: "forceRebuild",
    gpu: false,
    cmakeOptions: { ...LOCAL_BUILD_CMAKE_OPTIONS },
    progressLogs: "stderr",
    logLevel: LlamaLogLevel.error,
  });
  const binary = embeddedBinaryOf(llama);
  await llama.dispose();
  const built = await findLocalBuild();
  if (binary.kind !== "local" || !binary.openmp || built === null) {
    log(`the build finished but does not load as a local OpenMP build (loaded: ${binary.kind}, OpenMP ${binary.openmp ? "on" : "off"}); is libgomp installed?`);
    return 1;
  }
  log(`built in ${Math.round((performance.now() - started) / 1000)} s; the embedded engine now uses it (llama.embedded_binary: auto), \`local-ai doctor\` says so`);
  process.stdout.write(`${built.dir}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
