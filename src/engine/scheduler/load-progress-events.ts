import type { LoadProgress } from "../engine.js";
import type { ModelLoadEvent } from "./scheduler-types.js";

/**
 * An engine's load progress as a caller's `model_load` events: `loading` with `progress` at each
 * further tenth (node-llama-cpp reports hundreds of steps; a host draws a bar from ten), other
 * phases (a download) passed on to `onProgress` only.
 */
export function loadProgressEvents(model: string, listener: ((event: ModelLoadEvent) => void) | undefined, onProgress: ((progress: LoadProgress) => void) | undefined): (progress: LoadProgress) => void {
  let told = 0;
  return (progress) => {
    onProgress?.(progress);
    if (progress.phase !== "loading" || progress.progress === undefined) return;
    const tenth = Math.floor(progress.progress * 10);
    if (tenth <= told) return;
    told = tenth;
    listener?.({ model, state: "loading", progress: Math.min(1, Math.round(progress.progress * 100) / 100) });
  };
}
