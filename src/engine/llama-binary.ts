import { readdir, readFile, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type { Llama } from "node-llama-cpp";
import type { Config } from "../config/schema.js";

/**
 * The cmake options of the optional local build of node-llama-cpp's bundled llama.cpp
 * (`npm run build:embedded`, scripts/build-embedded.ts): OpenMP, so the decode threads persist
 * between tokens instead of being started for each one, and `-march=native` kernels.
 * node-llama-cpp names a local build's folder after its cmake options, so only a `getLlama` given
 * these same options finds it; a `getLlama` without them (or with no such build on disk) loads
 * the prebuilt binary.
 */
export const LOCAL_BUILD_CMAKE_OPTIONS: Readonly<Record<string, string>> = Object.freeze({ GGML_NATIVE: "ON", GGML_OPENMP: "ON" });

/** `llama.embedded_binary`: `auto` = the local build when there is one, else the prebuilt; `prebuilt` = never the local build. */
export type EmbeddedBinaryChoice = Config["llama"]["embedded_binary"];

/** Which llama.cpp binary a loaded node-llama-cpp runs, in the terms doctor and the logs use. */
export interface EmbeddedBinary {
  /** `local`: built on this machine (`npm run build:embedded`); `prebuilt`: shipped in node-llama-cpp's npm packages. */
  kind: "local" | "prebuilt";
  /** Built with OpenMP: decode threads that live as long as the process and wait without spinning forever. */
  openmp: boolean;
  /** The custom cmake options the binary was built with ({} for the prebuilt ones). */
  cmakeOptions: Record<string, string>;
}

export function embeddedBinaryOf(llama: Pick<Llama, "buildType" | "cmakeOptions" | "systemInfo">): EmbeddedBinary {
  return {
    kind: llama.buildType === "localBuild" ? "local" : "prebuilt",
    // llama.cpp lists each CPU backend feature it was compiled with: "... | OPENMP = 1 | ...".
    openmp: /\bOPENMP = 1\b/.test(llama.systemInfo),
    cmakeOptions: { ...llama.cmakeOptions },
  };
}

/** The local build of `npm run build:embedded` on disk (what `binary: auto` loads on a CPU). */
export interface LocalBuild {
  /** Its folder under node-llama-cpp's `llama/localBuilds`. */
  dir: string;
  /** When the build finished (the mtime of node-llama-cpp's `buildDone.status` marker). */
  builtAt: Date;
}

/**
 * Finds the finished CPU build with our cmake options among node-llama-cpp's local builds (it
 * names each folder after a hash of the options and keeps them in `_nlcBuildMetadata.json`), or
 * null. Reads a few small files; loads nothing.
 */
export async function findLocalBuild(root: string | null = localBuildsDir()): Promise<LocalBuild | null> {
  if (root === null) return null;
  const folders = await readdir(root).catch(() => [] as string[]);
  for (const folder of folders) {
    const dir = path.join(root, folder);
    try {
      const [metadata, done] = await Promise.all([readFile(path.join(dir, "Release", "_nlcBuildMetadata.json"), "utf8"), stat(path.join(dir, "buildDone.status"))]);
      const options = (JSON.parse(metadata) as { buildOptions?: { gpu?: unknown; customCmakeOptions?: Record<string, string> } }).buildOptions;
      if (options?.gpu === false && sameOptions(options.customCmakeOptions ?? {}, LOCAL_BUILD_CMAKE_OPTIONS)) return { dir, builtAt: done.mtime };
    } catch {
      // Not a finished build (or not one of node-llama-cpp's): skip it.
    }
  }
  return null;
}

/** node-llama-cpp's folder of local builds: <package>/dist/index.js -> <package>/llama/localBuilds; null when it is not installed. */
function localBuildsDir(): string | null {
  try {
    return path.join(path.dirname(createRequire(import.meta.url).resolve("node-llama-cpp")), "..", "llama", "localBuilds");
  } catch {
    return null;
  }
}

function sameOptions(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}
