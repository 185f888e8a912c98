import type { SessionRunner } from "../../agent/session-runner.js";
import { defineMethod, type MethodDefinition } from "../method.js";
import { pullProgressFields } from "../../wire/pull-progress-fields.js";


/**
 * The seed's "explicit warm-up": loads the agent's model and starts the MCP servers now, so the
 * first chat does not pay for it. Shared with (and idempotent against) a concurrent first chat.
 * A model whose reference is fetched first (`download: auto`) streams `pull_progress` events; a
 * load streams `model_load` events (queued for memory, loading with progress, loaded).
 */
export function warmUpMethod(runner: () => SessionRunner | Promise<SessionRunner>): MethodDefinition<never> {
  return defineMethod({
    params: () => import("./params-schemas.js").then((schemas) => schemas.warmUpParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.warmUpResult),
    events: () => import("./result-schemas.js").then((schemas) => schemas.warmUpEvents),
    handle: async (input, context) => {
      const started = Date.now();
      await (await runner()).warmUp(input.agent, context.signal, (progress) => {
        if (progress.phase !== "downloading" || progress.totalBytes === undefined) return;
        const { name, fields } = pullProgressFields({ downloadedBytes: progress.downloadedBytes ?? 0, totalBytes: progress.totalBytes });
        context.emit(name, fields);
      }, input.keep_alive, (load) => context.emit("model_load", { ...load }), context.log);
      return { status: "ok" as const, ms: Date.now() - started };
    },
  });
}
