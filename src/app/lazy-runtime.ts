import type { Runtime, RuntimeOptions } from "./runtime.js";

/** A runtime built (and its module graph imported) on first use; closing an unbuilt one is free. */
export interface LazyRuntime {
  get(): Promise<Runtime>;
  close(): Promise<void>;
}

/**
 * serve-stdio answers `initialize` and `ping` without the runtime: the composition root pulls in
 * the engines, the MCP client, the store and their dependencies, which a host pays for only when
 * it calls a method that needs them (doctor, plan, chat, warm_up).
 */
export function lazyRuntime(options: RuntimeOptions): LazyRuntime {
  let runtime: Promise<Runtime> | null = null;
  return {
    get: () => (runtime ??= import("./runtime.js").then(({ createRuntime }) => createRuntime(options))),
    close: async () => {
      if (runtime === null) return;
      await (await runtime).close();
    },
  };
}
