import type { Logger } from "pino";
import { defineMethod, type MethodDefinition } from "../method.js";
import { pullProgressFields, type PullProgressFacts } from "../../wire/pull-progress-fields.js";

/** What `pull` needs from the runtime (a reference to get, its progress, cancellation). */
export type PullService = (call: {
  ref: string;
  force: boolean;
  signal: AbortSignal;
  onProgress: (progress: PullProgressFacts) => void;
  /** The call's logger (its req_id): the download's own lines go there. */
  logger: Logger;
}) => Promise<{ path: string; bytes: number }>;

/**
 * `pull {ref, force?}`: gets a model into app.models_dir after the fit check, streaming
 * `pull_progress` events (a few a second, and a last one with every byte) and answering
 * `{path, bytes}`. Cancellable like a chat (`cancel`, `$/cancelRequest`): the answer is then
 * `cancelled` and the partial file stays for the next pull to resume. A model that does not fit
 * is refused with model_plan_error before any download (force: true downloads it anyway).
 */
export function pullMethod(pull: PullService): MethodDefinition<never> {
  return defineMethod({
    params: () => import("./params-schemas.js").then((schemas) => schemas.pullParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.pullResult),
    events: () => import("./result-schemas.js").then((schemas) => schemas.pullEvents),
    handle: async (input, context) => {
      const result = await pull({
        ref: input.ref,
        force: input.force,
        signal: context.signal,
        logger: context.log,
        onProgress: (progress) => {
          const { name, fields } = pullProgressFields(progress);
          context.emit(name, fields);
        },
      });
      return { path: result.path, bytes: result.bytes };
    },
  });
}
