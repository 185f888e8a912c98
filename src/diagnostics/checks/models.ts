import { baseUrlsOf } from "../../config/model-endpoints.js";
import type { Config, ModelConfig } from "../../config/schema.js";
import { driverOf } from "../../engine/drivers/engine-drivers.js";
import type { GgufHeaderProblem } from "../../engine/gguf/read-gguf-header.js";
import { isModelReference } from "../../config/model-reference.js";
import type { DownloadSettings } from "../../models/download-settings.js";
import { inspectModelFile } from "../../models/inspect-model-file.js";
import { isRuntimeError } from "../../shared/runtime-error.js";
import type { CheckResult } from "../doctor-report.js";
import { fail, firstLine, ok, warn } from "../check-result.js";
import { formatBytes } from "../../shared/format-bytes.js";

/** An endpoint that does not answer this fast is as good as down for a chat. */
export const OPENAI_PROBE_TIMEOUT_MS = 2000;

export interface ModelsCheckOptions {
  /** models_dir and the environment, to find the download of a reference in `path`. */
  settings: DownloadSettings;
  signal?: AbortSignal;
  /** Injected in tests; the global fetch otherwise. */
  fetch?: typeof fetch;
}

export async function checkModels(config: Config, options: ModelsCheckOptions): Promise<CheckResult[]> {
  const entries = Object.entries(config.llama.models);
  if (entries.length === 0) {
    return [
      warn("models", "Models", "no model is configured under llama.models", "add a model under llama.models (see config.example.yaml); chat needs one"),
    ];
  }
  return Promise.all(
    entries.map(([name, model]) => (driverOf(model).doctorChecks.includes("model_endpoint") ? checkOpenAiModel(name, model, options) : checkGgufModel(name, model, options))),
  );
}

type FileProblem = GgufHeaderProblem | "truncated" | "not_downloaded";

const FIXES: Record<FileProblem, (key: string, path: string, ref: string | null) => string> = {
  missing: (key, path) => `put the GGUF model file at ${path}, or set ${key}.path to where it is`,
  not_a_file: (key) => `set ${key}.path to the .gguf file itself, not a folder`,
  unreadable: (key, path) => `make ${path} readable for this user (chmod/chown), or set ${key}.path to a readable copy`,
  too_short: (key, path) => `download or copy ${path} again (it is truncated), or set ${key}.path to a complete .gguf file`,
  bad_magic: (key) => `set ${key}.path to a .gguf model file (GGUF is the format llama.cpp loads)`,
  unsupported_version: (key) => `get a current GGUF (v2 or v3) of this model, or re-convert it with llama.cpp's convert_hf_to_gguf.py, and point ${key}.path at it`,
  truncated: (key, path, ref) => (ref !== null ? `pull it again: \`local-ai pull ${ref}\` (the cut file is replaced)` : `download or copy ${path} again (it is cut short), or set ${key}.path to a complete .gguf file`),
  not_downloaded: (_key, _path, ref) => `run \`local-ai pull ${ref ?? ""}\``,
};

async function checkGgufModel(name: string, model: ModelConfig, options: ModelsCheckOptions): Promise<CheckResult> {
  const id = `model.${name}`;
  const title = `Model ${name}`;
  const key = `llama.models.${name}`;
  // The schema refuses a null path for these engines; this only guards the type.
  const configured = model.path ?? "";
  const ref = isModelReference(configured) ? configured : null;
  const data: Record<string, unknown> = { engine: model.engine, path: configured };
  try {
    const { path: file, header } = await inspectModelFile(name, model, options.settings, options.signal);
    const where = ref === null ? file : `${ref} -> ${file}`;
    return ok(id, title, `${model.engine}: GGUF v${header.version}, ${formatBytes(header.fileSize)}, ${header.tensorCount} tensors (${where})`, {
      ...data,
      ...(ref === null ? {} : { file }),
      gguf_version: header.version,
      size_bytes: header.fileSize,
      // bigint does not survive JSON.stringify; these counts fit a double for any real model.
      tensor_count: Number(header.tensorCount),
      metadata_count: Number(header.metadataCount),
    });
  } catch (error) {
    const reason = isRuntimeError(error) ? (error.details?.reason as FileProblem | undefined) : undefined;
    const file = isRuntimeError(error) && typeof error.details?.path === "string" ? error.details.path : configured;
    const fix = reason === undefined || !(reason in FIXES) ? `check that ${file} is a readable .gguf file` : FIXES[reason](key, file, ref);
    const finding = firstLine((error as Error).message);
    // A reference that downloads itself at warm-up is not broken yet, only not there.
    if (reason === "not_downloaded" && model.download === "auto") return warn(id, title, finding, `${fix} now, or let the first warm-up download it`, { ...data, reason });
    return fail(id, title, finding, fix, { ...data, reason: reason ?? "unreadable" });
  }
}

/**
 * A bounded GET <base_url>/models: an unreachable endpoint is only a warning, because a remote
 * server may simply not be started yet; doctor must not fail a machine for someone else's server.
 */
async function checkOpenAiModel(name: string, model: ModelConfig, options: ModelsCheckOptions): Promise<CheckResult> {
  const id = `model.${name}`;
  const title = `Model ${name}`;
  const key = `llama.models.${name}`;
  // The first endpoint (the one every request goes to while it is up).
  const baseUrl = baseUrlsOf(model)[0] ?? "";
  const url = `${baseUrl.replace(/\/+$/, "")}/models`;
  const data: Record<string, unknown> = { engine: "openai", base_url: baseUrl, model: model.model };
  const timeout = AbortSignal.timeout(OPENAI_PROBE_TIMEOUT_MS);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  let response: Response;
  let listed: string[] | undefined;
  try {
    response = await (options.fetch ?? fetch)(url, {
      signal,
      headers: model.api_key === null ? {} : { authorization: `Bearer ${model.api_key}` },
    });
    listed = response.ok ? modelIds(await response.json().catch(() => undefined)) : undefined;
    if (!response.ok) await response.body?.cancel().catch(() => undefined);
  } catch (error) {
    const why = timeout.aborted ? `no answer within ${OPENAI_PROBE_TIMEOUT_MS / 1000} s` : describeFetchError(error);
    return warn(id, title, `openai: ${url} is not reachable (${why})`, `start the server behind ${baseUrl}, or fix ${key}.base_url`, data);
  }
  if (response.status === 401 || response.status === 403) {
    return warn(id, title, `openai: ${url} refused the credentials (HTTP ${response.status})`, `set ${key}.api_key to a key this server accepts`, data);
  }
  if (!response.ok) {
    return warn(id, title, `openai: ${url} answered HTTP ${response.status}`, `check that ${key}.base_url ends with the API root (usually .../v1)`, data);
  }
  if (model.model !== null && listed !== undefined && !listed.includes(model.model)) {
    return warn(
      id,
      title,
      `openai: ${baseUrl} is up but does not list model "${model.model}" (it lists ${listed.length > 0 ? listed.slice(0, 5).join(", ") : "none"})`,
      `set ${key}.model to one of the listed model names`,
      { ...data, listed },
    );
  }
  return ok(id, title, `openai: ${baseUrl} is reachable${model.model === null ? "" : `, model "${model.model}"`}`, data);
}

function modelIds(body: unknown): string[] | undefined {
  if (body === null || typeof body !== "object") return undefined;
  const list = (body as { data?: unknown }).data;
  if (!Array.isArray(list)) return undefined;
  return list.flatMap((entry: unknown) => {
    const value = entry !== null && typeof entry === "object" ? (entry as { id?: unknown }).id : undefined;
    return typeof value === "string" ? [value] : [];
  });
}

/** undici hides the useful errno (ECONNREFUSED, ENOTFOUND) in `cause`. */
function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ECONNREFUSED") return "connection refused: nothing is listening there";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "the host name does not resolve";
  if (code !== undefined) return code;
  // The fetch standard blocks some ports outright (e.g. 9, 25, 6000) before connecting.
  if (cause instanceof Error && cause.message === "bad port") return "fetch refuses to connect to this port; run the server on another one";
  return firstLine(cause instanceof Error ? `${(error as Error).message}: ${cause.message}` : (error as Error).message);
}
