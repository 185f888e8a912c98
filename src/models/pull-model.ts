import { rm, stat } from "node:fs/promises";
import path from "node:path";
import type { GgufFileInfo, ModelDownloader } from "node-llama-cpp";
import { modelReferenceKind } from "../config/model-reference.js";
import { splitPartPaths } from "../engine/gguf/split-parts.js";
import { validateGguf } from "../engine/plan/validate-gguf.js";
import { modelFactsJson } from "../engine/plan/plan-json.js";
import type { ModelPlanEntry } from "../engine/plan/plan-types.js";
import { abortError, raceAbort, settlesWithin } from "../shared/abort.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { DownloadSettings } from "./download-settings.js";
import { trimDownloadTail } from "./trim-download-tail.js";
import { assertFreeSpace, expectedDownloadBytes, SIZE_SLACK_BYTES } from "./download-size.js";
import { DEFAULT_HUB } from "./hub-access.js";
import { findDownloaded, invalidReference } from "./find-downloaded.js";
import { throttleProgress, type PullProgress } from "./progress-throttle.js";
import { readRemoteModel, type RemoteModel } from "./remote-gguf.js";

/** What a pull is doing, for a front door that says it in words (the CLI) or logs it. */
export type PullStep =
  | { step: "found"; path: string; bytes: number }
  | { step: "replacing"; path: string; message: string }
  | { step: "checking"; ref: string }
  | { step: "fits"; entry: ModelPlanEntry }
  | { step: "forced"; error: RuntimeError }
  | { step: "downloading"; path: string; totalBytes: number; resumedBytes: number }
  | { step: "verifying"; path: string };

export interface PullRequest {
  /** A local path, an http(s) URL or an hf: reference. */
  ref: string;
  /** Download even when the fit check says the model does not fit (or cannot run). */
  force?: boolean;
  settings: DownloadSettings;
  /**
   * The fit check: plans the model from its remote header. Resolves with the plan entry; an entry
   * with status "error" refuses the download (unless `force`).
   */
  fitCheck(info: GgufFileInfo, signal?: AbortSignal): Promise<ModelPlanEntry>;
  signal?: AbortSignal;
  /** Throttled to one call per `progressIntervalMs`, plus a last one with every byte. */
  onProgress?: (progress: PullProgress) => void;
  progressIntervalMs?: number;
  onStep?: (step: PullStep) => void;
}

export interface PullResult {
  /** The file to load (the first part of a split model). */
  path: string;
  /** Bytes on disk, every part together. */
  bytes: number;
  /** False when the file was already there (or the reference is a local path). */
  downloaded: boolean;
}

/** How long a cancelled download may take to close its streams (and save its resume state). */
const CANCEL_SETTLE_MS = 2000;

/** Hosts get a handful of progress updates a second. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 250;

/**
 * Gets a model into app.models_dir, the way `local-ai pull` and the stdio `pull` method do:
 * an existing complete file is used as is; otherwise the fit check reads the GGUF header
 * remotely and refuses a model that cannot fit before any download starts; then
 * node-llama-cpp's downloader fetches it (parallel ranged requests), keeping a partial file
 * (`<file>.ipull`) when cancelled so the next pull resumes where this one stopped; the result is
 * checked to hold every tensor's data. A local path is only checked.
 */
export async function pullModel(request: PullRequest): Promise<PullResult> {
  const { ref, settings, signal } = request;
  const step = (value: PullStep): void => request.onStep?.(value);
  if (modelReferenceKind(ref) === "path") {
    const file = path.resolve(ref);
    await validateGguf(file, signal ? { signal } : {});
    return { path: file, bytes: await totalBytes(file), downloaded: false };
  }
  const existing = await findDownloaded(ref, settings);
  if (existing !== null) {
    const problem = await validateGguf(existing, signal ? { signal } : {}).then(
      () => null,
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );
    if (problem === null) {
      const bytes = await totalBytes(existing);
      step({ step: "found", path: existing, bytes });
      return { path: existing, bytes, downloaded: false };
    }
    // Only a file that is there but broken (cut short by a copy, say) is replaced: pulling again
    // is its fix. An interrupted check or an unexpected failure never deletes a model.
    if (signal?.aborted === true || !(problem instanceof RuntimeError) || problem.code !== "model_missing") throw problem;
    step({ step: "replacing", path: existing, message: problem.message });
    await Promise.all(splitPartPaths(existing).map((part) => rm(part, { force: true })));
  }

  step({ step: "checking", ref });
  const remote = await readRemoteModel(ref, settings.env, signal);
  // Never overridden by force: a server whose file is not the model its header describes.
  const expected = expectedDownloadBytes(remote);
  const entry = await request.fitCheck(remote.info, signal);
  if (entry.status === "error") {
    const refusal = refusalOf(ref, entry);
    if (request.force !== true) throw refusal;
    step({ step: "forced", error: refusal });
  } else {
    step({ step: "fits", entry });
  }
  if (expected !== undefined) {
    const partial = await stat(path.join(settings.modelsDir, `${remote.fileName}.ipull`)).then((stats) => stats.size, () => 0);
    await assertFreeSpace(settings.modelsDir, Math.max(0, expected - partial), ref).catch((error: unknown) => {
      if (request.force !== true || !(error instanceof RuntimeError)) throw error;
      step({ step: "forced", error });
    });
  }

  const progress = throttleProgress((value) => request.onProgress?.(value), request.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS);
  // The body is watched as it comes: past what the header describes, the download is stopped and its partial file removed.
  const limit = expected === undefined ? Infinity : expected + SIZE_SLACK_BYTES * remote.parts.length;
  const guard: { overrun: RuntimeError | null; stop: () => void } = { overrun: null, stop: () => undefined };
  const downloader = await createDownloader(request, remote, (status) => {
    if (status.downloadedBytes > limit && guard.overrun === null) {
      guard.overrun = oversized(ref, status.downloadedBytes, expected ?? 0);
      guard.stop();
    }
    progress.update(status);
  });
  const target = downloader.entrypointFilePath;
  guard.stop = () => void downloader.cancel({ deleteTempFile: true }).catch(() => undefined);
  if (expected !== undefined && downloader.totalSize > limit) {
    await downloader.cancel({ deleteTempFile: true }).catch(() => undefined);
    throw oversized(ref, downloader.totalSize, expected);
  }
  step({ step: "downloading", path: target, totalBytes: downloader.totalSize, resumedBytes: downloader.downloadedSize });
  progress.update({ downloadedBytes: downloader.downloadedSize, totalBytes: downloader.totalSize });
  const downloading = downloader.download(signal ? { signal } : {});
  try {
    // Raced with the signal: the downloader only stops waiting for streams that have started
    // (a connection still waiting for its response headers would keep it pending).
    await raceAbort(downloading, signal);
    if (guard.overrun !== null) throw guard.overrun;
  } catch (error) {
    progress.stop();
    if (guard.overrun !== null) {
      await settlesWithin(downloading, CANCEL_SETTLE_MS);
      await Promise.all(splitPartPaths(target).flatMap((part) => [rm(part, { force: true }), rm(`${part}.ipull`, { force: true })]));
      throw guard.overrun;
    }
    if (signal?.aborted === true) {
      await downloader.cancel({ deleteTempFile: false }).catch(() => undefined);
      await settlesWithin(downloading, CANCEL_SETTLE_MS);
      throw cancelledPull(target, error);
    }
    throw new RuntimeError("model_missing", `Downloading ${ref} failed: ${error instanceof Error ? error.message : String(error)}. Run the same pull again: it resumes where this one stopped`, {
      details: { ref, path: target, reason: "download_failed" },
      cause: error,
    });
  }
  progress.finish({ downloadedBytes: downloader.totalSize, totalBytes: downloader.totalSize });
  const localParts = splitPartPaths(target);
  if (localParts.length === remote.parts.length) {
    await trimDownloadTail(localParts.map((part, index) => ({ path: part, advertisedBytes: remote.parts[index]?.advertisedBytes })));
  }
  step({ step: "verifying", path: target });
  await validateGguf(target, signal ? { signal } : {});
  return { path: target, bytes: await totalBytes(target), downloaded: true };
}

/**
 * node-llama-cpp's downloader, sized but not started; cancellable meanwhile. It follows redirects
 * itself and sends its headers to wherever they lead, so it is given the URL the redirects ended
 * at (guardedFetch followed them) and the token only when that URL is on the hub's origin and no
 * origin change came before. A split model's files are given by the first's URL (it derives the
 * others): the token then only when no file's redirects leave the hub's origin.
 */
async function createDownloader(request: PullRequest, remote: RemoteModel, onProgress: (progress: PullProgress) => void): Promise<ModelDownloader> {
  const { createModelDownloader } = await import("node-llama-cpp");
  const [first] = remote.parts;
  const single = remote.parts.length === 1;
  const modelUri = single ? (first?.finalUrl ?? request.ref) : (first?.url ?? request.ref);
  const authorized = remote.access.token !== undefined && remote.parts.every((part) => part.authorized && new URL(part.finalUrl).origin === remote.access.origin);
  const creating = createModelDownloader({
    modelUri,
    dirPath: request.settings.modelsDir,
    showCliProgress: false,
    // Kept on cancel: the next pull resumes from it.
    deleteTempFileOnCancel: false,
    skipExisting: true,
    fileName: remote.fileName,
    headers: authorized ? { Authorization: `Bearer ${remote.access.token}` } : {},
    // The URL is downloaded as given (never taken for a hub reference) and no token is looked up by node-llama-cpp.
    endpoints: { huggingFace: DEFAULT_HUB },
    // null (typed as string) is node-llama-cpp's "no token": it then reads neither HF_TOKEN nor the token file.
    tokens: { huggingFace: null as unknown as string },
    onProgress: (status) => onProgress({ downloadedBytes: status.downloadedSize, totalBytes: status.totalSize }),
  }).catch((error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    if (/^Invalid (Hugging Face URI|URL)/.test(message)) throw invalidReference(request.ref, message, error);
    throw new RuntimeError("model_missing", `Cannot start downloading ${request.ref}: ${message}`, { details: { ref: request.ref, reason: "unreachable" }, cause: error });
  });
  const signal = request.signal;
  if (signal === undefined) return creating;
  if (signal.aborted) throw cancelledPull(null, abortError(signal));
  return new Promise<ModelDownloader>((resolve, reject) => {
    const onAbort = (): void => {
      reject(cancelledPull(null, abortError(signal)));
      // It has no signal of its own: close it once it exists.
      void creating.then((downloader) => downloader.cancel({ deleteTempFile: false })).catch(() => undefined);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    creating.then(
      (downloader) => {
        signal.removeEventListener("abort", onAbort);
        resolve(downloader);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

function oversized(ref: string, bytes: number, expected: number): RuntimeError {
  return new RuntimeError("model_missing", `Downloading ${ref} stopped: the server sends ${bytes} bytes or more, past the ${expected} its GGUF header describes; the partial file is removed`, {
    details: { ref, reason: "size_mismatch", advertised_bytes: bytes, described_bytes: expected },
  });
}

function refusalOf(ref: string, entry: ModelPlanEntry): RuntimeError {
  const error = entry.error ?? { code: "model_plan_error" as const, message: "the model cannot be planned" };
  const code = error.code === "model_plan_error" ? "model_plan_error" : error.code;
  return new RuntimeError(code, `Not downloading ${ref}: ${error.message} (--force, or force: true, downloads it anyway)`, {
    details: { ref, reason: code === "model_plan_error" ? "does_not_fit" : "fit_check_failed", ...(error.details ?? {}), ...(entry.model ? { model: modelFactsJson(entry.model) } : {}) },
  });
}

/** `target` is the file being downloaded (null before the download started: nothing to keep). */
function cancelledPull(target: string | null, cause: unknown): RuntimeError {
  if (target === null) return new RuntimeError("cancelled", "Pull cancelled before the download started", { cause });
  const partial = `${target}.ipull`;
  return new RuntimeError("cancelled", `Pull cancelled; the partial download is kept (${partial}) and the next pull of this model resumes it`, { details: { partial }, cause });
}

async function totalBytes(file: string): Promise<number> {
  const sizes = await Promise.all(splitPartPaths(file).map((part) => stat(part).then((stats) => stats.size, () => 0)));
  return sizes.reduce((sum, size) => sum + size, 0);
}
