import type { Llama } from "node-llama-cpp";
import type { Logger } from "pino";
import { LOCAL_BUILD_CMAKE_OPTIONS, type EmbeddedBinaryChoice } from "../llama-binary.js";

export type LlamaModule = typeof import("node-llama-cpp");

export interface LlamaHandle {
  module: LlamaModule;
  llama: Llama;
}

/** Same shape as the embedded engine's LlamaRuntime.get(), so a runtime can share its instance. */
export type LlamaLoader = () => Promise<LlamaHandle>;

/**
 * Imports node-llama-cpp and creates a Llama (about a second), only when called: nothing on the
 * path of `ping` or the fast doctor checks loads it. Never compiles or downloads: the GPU backend
 * it finds (CUDA, Vulkan, Metal) or the CPU, from the prebuilt binaries or, for `binary: auto`,
 * the local build that `npm run build:embedded` made (found by its cmake options; absent, the
 * prebuilt one loads). Its log lines go to the logger, or to stderr without one: stdout may be
 * carrying the protocol.
 */
export async function loadLlama(logger?: Logger, binary: EmbeddedBinaryChoice = "auto"): Promise<LlamaHandle> {
  const module = await import("node-llama-cpp");
  const log = logger?.child({ component: "node-llama-cpp" });
  const llama = await module.getLlama({
    build: "never",
    gpu: "auto",
    ...(binary === "auto" ? { cmakeOptions: { ...LOCAL_BUILD_CMAKE_OPTIONS } } : {}),
    progressLogs: false,
    logLevel: module.LlamaLogLevel.warn,
    logger: (level, message) => {
      const text = message.trimEnd();
      if (text === "") return;
      const serious = level === module.LlamaLogLevel.error || level === module.LlamaLogLevel.fatal;
      if (log === undefined) process.stderr.write(`[node-llama-cpp ${level}] ${text}\n`);
      else if (serious) log.error(text);
      else if (level === module.LlamaLogLevel.warn) log.warn(text);
      else log.debug(text);
    },
  });
  return { module, llama };
}

/**
 * One Llama for the length of one job (a plan, a doctor run), created on first use. When a
 * loader is injected (a runtime sharing its engine's instance) it is used and never disposed
 * here; a Llama created here is disposed by dispose().
 */
export function lazyLlama(options: { loader?: LlamaLoader; logger?: Logger; binary?: EmbeddedBinaryChoice }): { get: LlamaLoader; dispose(): Promise<void> } {
  let pending: Promise<LlamaHandle> | null = null;
  let loaded: LlamaHandle | null = null;
  const owned = options.loader === undefined;
  return {
    get: () => {
      pending ??= (options.loader !== undefined ? options.loader() : loadLlama(options.logger, options.binary)).then((handle) => (loaded = handle));
      return pending;
    },
    dispose: async () => {
      if (!owned || pending === null) return;
      // A load still in flight (its check timed out) is disposed when it lands; nobody waits for it.
      if (loaded === null) {
        pending.then((handle) => handle.llama.dispose()).catch(() => undefined);
        return;
      }
      await loaded.llama.dispose();
    },
  };
}
