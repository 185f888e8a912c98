import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type { LlamaLoader } from "../../engine/llama/llama-loader.js";
import type { CheckResult } from "../doctor-report.js";
import { fail, firstLine, ok } from "../check-result.js";
import { formatBytes } from "../../shared/format-bytes.js";

const REINSTALL_FIX =
  "reinstall local-ai's dependencies (`npm ci`) so node-llama-cpp's prebuilt llama.cpp binaries for this platform are present; see `LOCAL_AI_LOG_LEVEL=debug local-ai doctor` for its log";

/**
 * What node-llama-cpp runs on: its version and llama.cpp build (`node_llama_cpp`), and the GPU
 * backend it picked with each device and the VRAM (`gpu`). Loading it takes a second or more, so
 * this check is the one that pays for it; the model plan checks reuse the same instance.
 * CPU only is a fine answer (ok, with a note): small models run well on a CPU.
 */
export async function checkGpu(loader: LlamaLoader): Promise<CheckResult[]> {
  const version = await nodeLlamaCppVersion();
  let handle: Awaited<ReturnType<LlamaLoader>>;
  try {
    handle = await loader();
  } catch (error) {
    const message = firstLine(error instanceof Error ? error.message : String(error));
    return [fail("node_llama_cpp", "node-llama-cpp", `node-llama-cpp ${version} cannot start: ${message}`, REINSTALL_FIX, { version })];
  }
  const { llama } = handle;
  const release = llama.llamaCppRelease;
  const engine = ok(
    "node_llama_cpp",
    "node-llama-cpp",
    `node-llama-cpp ${version}, ${llama.buildType} llama.cpp binary (${release.release}), backend ${llama.gpu === false ? "cpu" : llama.gpu}`,
    { version, build_type: llama.buildType, llama_cpp_release: release.release, backend: llama.gpu === false ? "cpu" : llama.gpu, system_info: llama.systemInfo.trim() },
  );
  if (llama.gpu === false || !llama.supportsGpuOffloading) {
    return [
      engine,
      ok(
        "gpu",
        "GPU",
        `CPU only: no CUDA, Vulkan or Metal device found; models run on the CPU (${llama.cpuMathCores} math cores), which suits small models`,
        { backend: false, devices: [], cpu_math_cores: llama.cpuMathCores },
      ),
    ];
  }
  const [devices, vram] = await Promise.all([llama.getGpuDeviceNames(), llama.getVramState()]);
  const names = devices.length > 0 ? devices.join(", ") : "an unnamed device";
  const unified = vram.unifiedSize > 0 ? ` (${formatBytes(vram.unifiedSize)} unified with RAM)` : "";
  return [
    engine,
    ok("gpu", "GPU", `${llama.gpu} on ${names}: ${formatBytes(vram.free)} free of ${formatBytes(vram.total)} VRAM${unified}`, {
      backend: llama.gpu,
      devices,
      vram_total_bytes: vram.total,
      vram_free_bytes: vram.free,
      unified_bytes: vram.unifiedSize,
    }),
  ];
}

/** From node-llama-cpp's own package.json: the version actually installed, not the one asked for. */
async function nodeLlamaCppVersion(): Promise<string> {
  try {
    const entry = createRequire(import.meta.url).resolve("node-llama-cpp");
    const manifest = JSON.parse(await readFile(path.join(path.dirname(entry), "..", "package.json"), "utf8")) as { version?: unknown };
    return typeof manifest.version === "string" ? manifest.version : "(unknown version)";
  } catch {
    return "(not installed)";
  }
}
