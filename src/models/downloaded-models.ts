import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { isModelReference } from "../config/model-reference.js";
import { modelSchema, type Config } from "../config/schema.js";
import { isEntryPart } from "../engine/gguf/split-parts.js";
import type { DownloadSettings } from "./download-settings.js";
import { findDownloaded } from "./find-downloaded.js";
import { configUses } from "./model-catalog.js";

/** A model file in app.models_dir, and the `llama.models` name it is served under. */
export interface DownloadedModel {
  /** A config entry that uses the file, else the file's name (`model.Q4_K_M.gguf`). */
  name: string;
  path: string;
  /** True when a config entry uses the file (it is served as that entry, with its settings). */
  configured: boolean;
}

/**
 * Models on demand (llama.serve_downloaded, docs/models.md): GGUF files in app.models_dir that no
 * config entry uses are served like configured models, under their file name, with the settings
 * `pull` planned them with (a model entry's defaults). Adopting one adds that entry to the
 * runtime's own model table (`config`, the composition root's copy of llama.models, never the
 * loaded config file's), so that the engines, the scheduler's estimate and `ps` find it like any
 * other model; an entry once added stays (a file removed later fails its load with model_missing).
 */
export class DownloadedModels {
  constructor(
    /** The runtime's model table (its own copy of the config): adopted entries are added to it. */
    private readonly config: Config,
    private readonly settings: DownloadSettings,
    /** llama.serve_downloaded as decided for this front door. */
    readonly served: boolean,
  ) {}

  /**
   * The file a request names: `name.gguf` or `name` in models_dir (no folders: `../x` is nothing),
   * or the reference (`hf:owner/repo:QUANT`, a URL) it was pulled from; null when there is none.
   */
  async find(requested: string): Promise<DownloadedModel | null> {
    const file = isModelReference(requested) ? await findDownloaded(requested, this.settings).catch(() => null) : await this.fileNamed(requested);
    if (file === null) return null;
    const name = path.basename(file);
    // An entry named after the file is one adopted earlier, not a configured one.
    const configured = ((await configUses(this.config, this.settings)).users.get(file) ?? []).find((user) => user !== name);
    return configured !== undefined ? { name: configured, path: file, configured: true } : { name, path: file, configured: false };
  }

  /** The `llama.models` name serving the file (adopting it with default settings first). */
  adopt(model: DownloadedModel): string {
    if (!model.configured && !Object.hasOwn(this.config.llama.models, model.name)) {
      this.config.llama.models[model.name] = modelSchema.parse({ path: model.path });
    }
    return model.name;
  }

  /** Every whole GGUF in models_dir that no config entry uses (the first part of a split one), adopted; empty when not served. */
  async list(): Promise<string[]> {
    if (!this.served) return [];
    const names = await readdir(this.settings.modelsDir).catch(() => [] as string[]);
    const { users } = await configUses(this.config, this.settings);
    const found: string[] = [];
    for (const name of names.sort()) {
      const file = path.join(this.settings.modelsDir, name);
      if (!name.toLowerCase().endsWith(".gguf") || !isEntryPart(file) || (users.get(file) ?? []).some((user) => user !== name)) continue;
      if (!(await isFile(file))) continue;
      // A configured model of that name keeps it: the file is reached by its reference only.
      if (Object.hasOwn(this.config.llama.models, name) && this.config.llama.models[name]?.path !== file) continue;
      found.push(this.adopt({ name, path: file, configured: false }));
    }
    return found;
  }

  private async fileNamed(requested: string): Promise<string | null> {
    if (requested === "" || /[/\\]/.test(requested) || requested.startsWith(".")) return null;
    const candidates = requested.toLowerCase().endsWith(".gguf") ? [requested] : [`${requested}.gguf`, requested];
    for (const candidate of candidates) {
      const file = path.join(this.settings.modelsDir, candidate);
      if (candidate.toLowerCase().endsWith(".gguf") && isEntryPart(file) && (await isFile(file))) return file;
    }
    return null;
  }
}

function isFile(file: string): Promise<boolean> {
  return stat(file).then((stats) => stats.isFile(), () => false);
}
