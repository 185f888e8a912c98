import type { Runtime, RuntimeOptions } from "./runtime.js";

/** A runtime built (and its module graph imported) on first use; closing an unbuilt one is free. */
export interface LazyRuntime {
  get(): Promise<Runtime>;
  close(): Promise<void>;
}

/**
 * serve-stdio answers `initialize` and `ping` without the runtime: the composition root pulls in
 * the engines, the MCP client, the store and their dependencies, which a host pays for only when
 * it calls a method that needs them (doctor, plan, chat, warm_up). The options wait for the
 * config, which serve-stdio may still be parsing in the background (src/app/stdio-config.ts).
 */
export function lazyRuntime(options: Promise<RuntimeOptions>): LazyRuntime {
  let runtime: Promise<Runtime> | null = null;
  return {
    get: () => (runtime ??= Promise.all([import("./runtime.js"), options]).then(([{ createRuntime }, resolved]) => createRuntime(resolved))),
    close: async () => {
      if (runtime === null) return;
      await (await runtime).close();
    },
  };
}
