import { readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { GgufFileInfo } from "node-llama-cpp";
import { isModelReference } from "../config/model-reference.js";
import type { Config } from "../config/schema.js";
import { checkGgufFile } from "../engine/gguf/check-gguf-file.js";
import { driverOf } from "../engine/drivers/engine-drivers.js";
import { findShortfalls } from "../engine/gguf/gguf-completeness.js";
import { isEntryPart, splitPartPaths } from "../engine/gguf/split-parts.js";
import { fileTypeName } from "../engine/plan/quantization.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { DownloadSettings } from "./download-settings.js";
import { findDownloaded } from "./find-downloaded.js";

/** node-llama-cpp's downloader writes `<file>.ipull` until the file is complete. */
const PARTIAL_SUFFIX = ".ipull";

export interface CatalogEntry {
  /** Name in models_dir (the first part of a split model). */
  file: string;
  path: string;
  /** Every part together. */
  bytes: number;
  parts: number;
  /** truncated: a part ends before its tensors' data; unreadable: not a GGUF we can read. */
  status: "ok" | "truncated" | "unreadable";
  problem?: string;
  architecture?: string;
  parameters?: number;
  quantization?: string;
  trainedContext?: number;
  /** Config entries (llama.models keys) whose path is this file, or a reference downloaded to it. */
  usedBy: string[];
}

export interface PartialDownload {
  /** The file it becomes when complete. */
  file: string;
  path: string;
  /** On disk so far (the partial file also holds a little resume state). */
  bytes: number;
}

export interface Catalog {
  modelsDir: string;
  models: CatalogEntry[];
  partial: PartialDownload[];
  /** Config entries whose `path` is a reference that is not downloaded (yet). */
  notDownloaded: Array<{ model: string; ref: string }>;
}

/**
 * `local-ai models`: the GGUF files in models_dir, what each is (from the header, in JS: no
 * llama.cpp), whether it is whole, and which config entries use it; partial downloads apart.
 * A models_dir that does not exist yet is an empty catalog.
 */
export async function listModels(config: Config, settings: DownloadSettings): Promise<Catalog> {
  const names = await readdir(settings.modelsDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    throw new RuntimeError("config_invalid", `app.models_dir ${settings.modelsDir} cannot be read: ${error.message}`, { details: { config_key: "app.models_dir" } });
  });
  const { users, notDownloaded } = await configUses(config, settings);
  const models: CatalogEntry[] = [];
  const partial: PartialDownload[] = [];
  for (const name of names.sort()) {
    const file = path.join(settings.modelsDir, name);
    if (name.endsWith(PARTIAL_SUFFIX)) {
      partial.push({ file: name.slice(0, -PARTIAL_SUFFIX.length), path: file, bytes: await sizeOf(file) });
      continue;
    }
    if (!name.toLowerCase().endsWith(".gguf") || !isEntryPart(file)) continue;
    if (!(await stat(file).then((stats) => stats.isFile(), () => false))) continue;
    models.push(await describeFile(name, file, users.get(file) ?? []));
  }
  return { modelsDir: settings.modelsDir, models, partial, notDownloaded };
}

/**
 * `local-ai models rm <file>`: removes a model from models_dir (every part of a split model, and
 * its partial download). `file` is a name in models_dir or a path inside it; anything else is
 * refused, so rm never deletes outside the folder pull writes to. A model the config uses is
 * kept unless `force`: deleting a multi-GiB download by mistake costs the download again.
 */
export async function removeModel(config: Config, settings: DownloadSettings, file: string, options: { force?: boolean } = {}): Promise<{ removed: string[] }> {
  const target = path.resolve(settings.modelsDir, file);
  const inside = path.relative(settings.modelsDir, target);
  if (inside === "" || inside.startsWith("..") || path.isAbsolute(inside)) {
    throw new RuntimeError("invalid_params", `${file} is not in app.models_dir (${settings.modelsDir}); models rm only removes what pull downloaded there`, { details: { file } });
  }
  const base = target.endsWith(PARTIAL_SUFFIX) ? target.slice(0, -PARTIAL_SUFFIX.length) : target;
  const parts = splitPartPaths(base);
  const candidates = [...parts, ...parts.map((part) => `${part}${PARTIAL_SUFFIX}`)];
  const present = (await Promise.all(candidates.map(async (candidate) => ((await stat(candidate).then(() => true, () => false)) ? candidate : null)))).filter(
    (candidate): candidate is string => candidate !== null,
  );
  if (present.length === 0) {
    throw new RuntimeError("invalid_params", `No model ${path.basename(base)} in ${settings.modelsDir} (\`local-ai models\` lists them)`, { details: { file } });
  }
  const users = (await configUses(config, settings)).users.get(parts[0] ?? base) ?? [];
  if (users.length > 0 && options.force !== true) {
    throw new RuntimeError("invalid_params", `${path.basename(base)} is used by ${users.map((name) => `llama.models.${name}`).join(", ")}; change the config first, or remove it anyway with --force`, {
      details: { file, used_by: users },
    });
  }
  await Promise.all(present.map((candidate) => rm(candidate, { force: true })));
  return { removed: present };
}

async function describeFile(name: string, file: string, usedBy: string[]): Promise<CatalogEntry> {
  const parts = splitPartPaths(file);
  const sizes = await Promise.all(parts.map(sizeOf));
  const base: CatalogEntry = { file: name, path: file, bytes: sizes.reduce((sum, size) => sum + size, 0), parts: parts.length, status: "ok", usedBy };
  const { readGgufFileInfo } = await import("node-llama-cpp");
  let info: GgufFileInfo;
  try {
    // Bounded first: node-llama-cpp's reader trusts the header's counts.
    await checkGgufFile(file);
    info = await readGgufFileInfo(file, { sourceType: "filesystem", logWarnings: false });
  } catch (error) {
    return { ...base, status: "unreadable", problem: error instanceof Error ? error.message : String(error) };
  }
  const facts = factsOf(info, base.bytes);
  const headerEnd = Number(info.infoEndOffset);
  const shortfall = (info.fullTensorInfo ?? []).length > 0 && headerEnd > (sizes[0] ?? 0) ? { part: 1, neededBytes: headerEnd, actualBytes: sizes[0] ?? 0 } : findShortfalls(info.fullTensorInfo ?? [], sizes)[0];
  if (shortfall !== undefined) {
    const missing = shortfall.neededBytes - shortfall.actualBytes;
    return { ...base, ...facts, status: "truncated", problem: `cut short: ${missing} bytes missing${parts.length > 1 ? ` in part ${shortfall.part}` : ""}; pull it again` };
  }
  return { ...base, ...facts };
}

/** What the header says, without llama.cpp: parameters are the tensors' element counts. */
function factsOf(info: GgufFileInfo, bytes: number): Pick<CatalogEntry, "architecture" | "parameters" | "quantization" | "trainedContext"> {
  const general = info.metadata.general as { architecture?: string; file_type?: number } | undefined;
  const parameters = (info.fullTensorInfo ?? []).reduce((sum, tensor) => sum + tensor.dimensions.reduce<number>((product, dim) => product * Number(dim), 1), 0);
  const context = (info.architectureMetadata as { context_length?: number } | undefined)?.context_length;
  return {
    ...(general?.architecture === undefined ? {} : { architecture: general.architecture }),
    parameters,
    quantization: fileTypeName(general?.file_type, parameters > 0 ? (bytes * 8) / parameters : 0),
    ...(typeof context === "number" ? { trainedContext: context } : {}),
  };
}

/** Absolute file -> the config entries that load it (a path, or a reference downloaded to it), and the references not downloaded. */
export async function configUses(config: Config, settings: DownloadSettings): Promise<{ users: Map<string, string[]>; notDownloaded: Catalog["notDownloaded"] }> {
  const users = new Map<string, string[]>();
  const notDownloaded: Catalog["notDownloaded"] = [];
  for (const [name, model] of Object.entries(config.llama.models)) {
    if (driverOf(model).local === null || model.path === null) continue;
    const ref = isModelReference(model.path) ? model.path : null;
    const file = ref !== null ? await findDownloaded(ref, settings).catch(() => null) : model.path;
    if (file === null) {
      if (ref !== null) notDownloaded.push({ model: name, ref });
      continue;
    }
    users.set(file, [...(users.get(file) ?? []), name]);
  }
  return { users, notDownloaded };
}

function sizeOf(file: string): Promise<number> {
  return stat(file).then((stats) => stats.size, () => 0);
}
