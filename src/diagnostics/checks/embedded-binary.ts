import { embeddedAutoThreads } from "../../engine/auto-threads.js";
import { embeddedBinaryOf, findLocalBuild, type EmbeddedBinaryChoice, type LocalBuild } from "../../engine/llama-binary.js";
import type { LlamaLoader } from "../../engine/llama/llama-loader.js";
import type { CheckResult } from "../doctor-report.js";
import { firstLine, ok, warn } from "../check-result.js";

const ID = "embedded.binary";
const TITLE = "Embedded binary";

/**
 * Which llama.cpp binary the embedded engine runs and why: node-llama-cpp's prebuilt one or the
 * local OpenMP build of `npm run build:embedded` (llama-binary.ts), and `threads: auto` on it.
 * Runs only when a model uses the embedded engine; shares doctor's node-llama-cpp.
 */
export async function checkEmbeddedBinary(
  loader: LlamaLoader,
  choice: EmbeddedBinaryChoice,
  findLocal: () => Promise<LocalBuild | null> = () => findLocalBuild(),
): Promise<CheckResult> {
  const [local, handle] = await Promise.all([findLocal(), loader().catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))))]);
  if (handle instanceof Error) {
    // The node_llama_cpp check reports the load failure and its fix; this line only says so.
    return warn(ID, TITLE, `unknown: node-llama-cpp did not load (${firstLine(handle.message)})`, "see the node_llama_cpp check", { choice });
  }
  const { llama } = handle;
  const binary = embeddedBinaryOf(llama);
  const threads = embeddedAutoThreads(llama.cpuMathCores);
  // A list, not an object: cmake's option names are not snake_case wire keys.
  const options = Object.entries(binary.cmakeOptions).map(([key, value]) => `${key}=${value}`);
  const data = { choice, kind: binary.kind, openmp: binary.openmp, cmake_options: options, local_build: local?.dir ?? null, auto_threads: threads, backend: llama.gpu === false ? "cpu" : llama.gpu };
  const flags = options.join(" ");
  if (binary.kind === "local") {
    return ok(ID, TITLE, `local build of \`npm run build:embedded\` (${flags}), picked by llama.embedded_binary: auto; OpenMP ${binary.openmp ? "on" : "off"}, threads: auto = ${threads}`, data);
  }
  const prebuilt = `node-llama-cpp's prebuilt ${llama.gpu === false ? "CPU" : llama.gpu} binary`;
  const threading = `OpenMP ${binary.openmp ? "on" : "off"}, threads: auto = ${threads}`;
  if (llama.gpu !== false) return ok(ID, TITLE, `${prebuilt}: a GPU backend goes first (the local build is CPU only)`, data);
  if (choice === "prebuilt") return ok(ID, TITLE, `${prebuilt}, because llama.embedded_binary is prebuilt${local ? " (a local build exists, unused)" : ""}: ${threading}`, data);
  if (local !== null) {
    return warn(ID, TITLE, `${prebuilt}: the local build exists but did not load; ${threading}`, "rebuild it with `npm run build:embedded -- --force` (or set llama.embedded_binary: prebuilt); node-llama-cpp prints why it did not load on stderr", data);
  }
  return ok(ID, TITLE, `${prebuilt}: no local build (\`npm run build:embedded\` makes one with OpenMP: docs/engines.md); ${threading}`, data);
}
