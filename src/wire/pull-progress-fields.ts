/** Bytes of a model download so far and in all (src/models reports them; no import needed here). */
export interface PullProgressFacts {
  downloadedBytes: number;
  totalBytes: number;
}

/**
 * The one wire form of download progress, an event of a request that is not an agent turn (`pull`,
 * and `warm_up` of a model with `download: auto`): stdio v1 sends `{id, type: "event", event:
 * "pull_progress", downloaded_bytes, total_bytes}`, JSON-RPC the same fields in its `$/event`
 * notification. Like toEventFields for AgentEvents, every front door takes it from here.
 */
export function pullProgressFields(progress: PullProgressFacts): { name: "pull_progress"; fields: { downloaded_bytes: number; total_bytes: number } } {
  return { name: "pull_progress", fields: { downloaded_bytes: progress.downloadedBytes, total_bytes: progress.totalBytes } };
}
