import type { Llama } from "node-llama-cpp";
import type { Logger } from "pino";
import { embeddedBinaryOf, type EmbeddedBinaryChoice } from "../llama-binary.js";
import { loadLlama } from "../llama/llama-loader.js";

type LlamaModule = typeof import("node-llama-cpp");

/**
 * One node-llama-cpp instance per process, created on first use. Importing node-llama-cpp and
 * calling getLlama costs about a second, so nothing on the path of `ping` or `doctor` touches it.
 * Never compiles or downloads at run time: the prebuilt binaries, or the local build of
 * `npm run build:embedded` when `binary` is `auto` and one exists (llama-binary.ts). GPU backends
 * are used when present (CUDA, Vulkan, Metal), CPU otherwise. Its log lines go to our pino logger
 * (stderr).
 */
export class LlamaRuntime {
  private llama: Promise<{ module: LlamaModule; llama: Llama }> | null = null;

  constructor(
    private readonly logger: Logger,
    private readonly binary: EmbeddedBinaryChoice = "auto",
  ) {}

  async get(): Promise<{ module: LlamaModule; llama: Llama }> {
    this.llama ??= this.load().catch((error: unknown) => {
      this.llama = null; // a failed load may be retried
      throw error;
    });
    return this.llama;
  }

  /** True once loaded; lets health reporting avoid triggering a load. */
  get loaded(): boolean {
    return this.llama !== null;
  }

  async dispose(): Promise<void> {
    const pending = this.llama;
    this.llama = null;
    if (pending === null) return;
    const { llama } = await pending.catch(() => ({ llama: null }));
    await llama?.dispose();
  }

  private async load(): Promise<{ module: LlamaModule; llama: Llama }> {
    const started = Date.now();
    const handle = await loadLlama(this.logger, this.binary);
    const { kind, openmp } = embeddedBinaryOf(handle.llama);
    this.logger.info({ gpu: handle.llama.gpu, cpu_math_cores: handle.llama.cpuMathCores, binary: kind, openmp, ms: Date.now() - started }, "node-llama-cpp ready");
    return handle;
  }
}
