// Which llama.cpp binary the embedded engine runs (prebuilt or the local OpenMP build of
// `npm run build:embedded`), what that means for threads: auto, and doctor's line about it.
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { checkEmbeddedBinary } from "../../src/diagnostics/checks/embedded-binary.js";
import { embeddedAutoThreads, llamaServerAutoThreads } from "../../src/engine/auto-threads.js";
import { embeddedBinaryOf, findLocalBuild, LOCAL_BUILD_CMAKE_OPTIONS, type LocalBuild } from "../../src/engine/llama-binary.js";
import type { LlamaHandle, LlamaLoader } from "../../src/engine/llama/llama-loader.js";

const PREBUILT_INFO = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | LLAMAFILE = 1 | REPACK = 1 | ";
const LOCAL_INFO = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | ";

function fakeLlama(kind: "local" | "prebuilt", gpu: "cuda" | false = false, cores = 2): LlamaLoader {
  const llama = {
    gpu,
    buildType: kind === "local" ? "localBuild" : "prebuilt",
    cmakeOptions: kind === "local" ? { ...LOCAL_BUILD_CMAKE_OPTIONS } : {},
    systemInfo: kind === "local" ? LOCAL_INFO : PREBUILT_INFO,
    cpuMathCores: cores,
  };
  return async () => ({ module: {}, llama }) as unknown as LlamaHandle;
}

const LOCAL: LocalBuild = { dir: "/pkg/llama/localBuilds/linux-x64-abc", builtAt: new Date(0) };
const found = (build: LocalBuild | null) => async () => build;

describe("embeddedBinaryOf", () => {
  it("reads the build type, its cmake options, and OpenMP from llama.cpp's system info", () => {
    assert.deepEqual(embeddedBinaryOf({ buildType: "localBuild", cmakeOptions: { GGML_OPENMP: "ON" }, systemInfo: LOCAL_INFO }), { kind: "local", openmp: true, cmakeOptions: { GGML_OPENMP: "ON" } });
    assert.deepEqual(embeddedBinaryOf({ buildType: "prebuilt", cmakeOptions: {}, systemInfo: PREBUILT_INFO }), { kind: "prebuilt", openmp: false, cmakeOptions: {} });
    assert.equal(embeddedBinaryOf({ buildType: "localBuild", cmakeOptions: {}, systemInfo: "CPU : OPENMP = 0 | " }).openmp, false);
  });
});

describe("threads: auto per engine", () => {
  it("leaves the embedded engine one core fewer (the JS thread needs it); llama-server gets every core", () => {
    assert.deepEqual([0, 1, 2, 8].map((cores) => embeddedAutoThreads(cores)), [1, 1, 1, 7]);
    assert.deepEqual([1, 2, 8].map((cores) => llamaServerAutoThreads(cores)), [1, 2, 8]);
  });
});

describe("findLocalBuild", () => {
  let root = "";
  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), "local-builds-"));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function build(folder: string, options: { gpu: string | false; customCmakeOptions: Record<string, string> }, done = true): Promise<void> {
    await mkdir(path.join(root, folder, "Release"), { recursive: true });
    await writeFile(path.join(root, folder, "Release", "_nlcBuildMetadata.json"), JSON.stringify({ buildOptions: { ...options, platform: "linux", arch: "x64" } }));
    if (done) await writeFile(path.join(root, folder, "buildDone.status"), "");
  }

  it("finds only a finished CPU build with exactly our cmake options", async () => {
    assert.equal(await findLocalBuild(path.join(root, "missing")), null);
    await build("linux-x64", { gpu: false, customCmakeOptions: {} });
    await build("linux-x64-other", { gpu: false, customCmakeOptions: { GGML_OPENMP: "ON" } });
    await build("linux-x64-cuda-ours", { gpu: "cuda", customCmakeOptions: { ...LOCAL_BUILD_CMAKE_OPTIONS } });
    await build("linux-x64-unfinished", { gpu: false, customCmakeOptions: { ...LOCAL_BUILD_CMAKE_OPTIONS } }, false);
    await mkdir(path.join(root, "not-a-build"));
    assert.equal(await findLocalBuild(root), null);
    await build("linux-x64-ours", { gpu: false, customCmakeOptions: { GGML_OPENMP: "ON", GGML_NATIVE: "ON" } });
    assert.equal((await findLocalBuild(root))?.dir, path.join(root, "linux-x64-ours"));
  });
});

describe("embedded.binary doctor check", () => {
  it("names the local build, its cmake options and threads: auto when it loaded", async () => {
    const check = await checkEmbeddedBinary(fakeLlama("local"), "auto", found(LOCAL));
    assert.equal(check.status, "ok");
    assert.equal(check.finding, "local build of `npm run build:embedded` (GGML_NATIVE=ON GGML_OPENMP=ON), picked by llama.embedded_binary: auto; OpenMP on, threads: auto = 1");
    assert.deepEqual(check.data, { choice: "auto", kind: "local", openmp: true, cmake_options: ["GGML_NATIVE=ON", "GGML_OPENMP=ON"], local_build: LOCAL.dir, auto_threads: 1, backend: "cpu" });
  });

  it("says how to get the local build when there is none", async () => {
    const check = await checkEmbeddedBinary(fakeLlama("prebuilt"), "auto", found(null));
    assert.equal(check.status, "ok");
    assert.equal(check.finding, "node-llama-cpp's prebuilt CPU binary: no local build (`npm run build:embedded` makes one with OpenMP: docs/engines.md); OpenMP off, threads: auto = 1");
    assert.equal(check.data?.local_build, null);
  });

  it("says the config chose the prebuilt binary, and that a local build is left unused", async () => {
    const check = await checkEmbeddedBinary(fakeLlama("prebuilt", false, 8), "prebuilt", found(LOCAL));
    assert.equal(check.status, "ok");
    assert.equal(check.finding, "node-llama-cpp's prebuilt CPU binary, because llama.embedded_binary is prebuilt (a local build exists, unused): OpenMP off, threads: auto = 7");
  });

  it("warns with a fix when a local build exists but the prebuilt one loaded", async () => {
    const check = await checkEmbeddedBinary(fakeLlama("prebuilt"), "auto", found(LOCAL));
    assert.equal(check.status, "warn");
    assert.match(check.finding, /the local build exists but did not load/);
    assert.match(check.fix ?? "", /npm run build:embedded -- --force/);
  });

  it("says a GPU backend goes first", async () => {
    const check = await checkEmbeddedBinary(fakeLlama("prebuilt", "cuda"), "auto", found(LOCAL));
    assert.equal(check.status, "ok");
    assert.equal(check.finding, "node-llama-cpp's prebuilt cuda binary: a GPU backend goes first (the local build is CPU only)");
  });

  it("points at the node_llama_cpp check when node-llama-cpp does not load", async () => {
    const check = await checkEmbeddedBinary(() => Promise.reject(new Error("no binary\nmore")), "auto", found(null));
    assert.equal(check.status, "warn");
    assert.equal(check.finding, "unknown: node-llama-cpp did not load (no binary)");
  });
});
