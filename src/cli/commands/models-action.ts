import path from "node:path";
import type { Command } from "commander";
import { formatBytes } from "../../shared/format-bytes.js";
import { formatParams } from "../../engine/plan/plan-alternatives.js";
import { downloadSettingsOf } from "../../models/download-settings.js";
import { listModels, removeModel, type Catalog } from "../../models/model-catalog.js";
import { toRuntimeError } from "../../shared/runtime-error.js";
import { configOrDefaults } from "../../config/config-or-defaults.js";
import type { CliDeps } from "../cli-deps.js";
import { writeOut } from "../write-out.js";

interface ModelsOptions {
  json?: boolean;
  config?: string;
  force?: boolean;
}

/** `local-ai models`: exit 0, or 1 when a listed model is truncated or unreadable (a script can tell). */
export async function runModelsListCommand(command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<ModelsOptions>();
  try {
    const { config } = await configOrDefaults(options.config, deps);
    const catalog = await listModels(config, downloadSettingsOf(config, deps.env));
    await writeOut(deps.stdout, options.json === true ? `${JSON.stringify(catalog, null, 2)}\n` : renderCatalog(catalog));
    deps.setExitCode(catalog.models.every((entry) => entry.status === "ok") ? 0 : 1);
  } catch (error) {
    await fail(error, "models", options.json === true, deps);
  }
}

export async function runModelsRemoveCommand(file: string, command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<ModelsOptions>();
  try {
    const { config } = await configOrDefaults(options.config, deps);
    const { removed } = await removeModel(config, downloadSettingsOf(config, deps.env), file, { force: options.force === true });
    await writeOut(deps.stdout, removed.map((entry) => `removed ${entry}\n`).join(""));
    deps.setExitCode(0);
  } catch (error) {
    await fail(error, "models rm", false, deps);
  }
}

async function fail(error: unknown, name: string, json: boolean, deps: CliDeps): Promise<void> {
  const failure = toRuntimeError(error);
  if (json) await writeOut(deps.stdout, `${JSON.stringify({ ok: false, error: { code: failure.code, message: failure.message } }, null, 2)}\n`);
  else deps.stderr.write(`local-ai ${name}: ${failure.message}\n`);
  deps.setExitCode(failure.code === "invalid_params" ? 2 : 1);
}

/** One block per model; partial downloads and configured references not downloaded after. */
export function renderCatalog(catalog: Catalog): string {
  const lines: string[] = [`Models in ${catalog.modelsDir}:`];
  if (catalog.models.length === 0) lines.push("  (none yet: `local-ai pull <ref>` downloads one)");
  for (const entry of catalog.models) {
    const facts = [entry.architecture, entry.parameters !== undefined && entry.parameters > 0 ? `${formatParams(entry.parameters)} params` : undefined, entry.quantization, entry.trainedContext !== undefined ? `trained ctx ${entry.trainedContext}` : undefined]
      .filter((part): part is string => part !== undefined)
      .join(", ");
    const parts = entry.parts > 1 ? `, ${entry.parts} parts` : "";
    lines.push(`  ${entry.file}  ${formatBytes(entry.bytes)}${parts}${facts === "" ? "" : `  ${facts}`}`);
    if (entry.status !== "ok") lines.push(`      ${entry.status.toUpperCase()}: ${entry.problem ?? ""}`);
    lines.push(`      used by: ${entry.usedBy.length > 0 ? entry.usedBy.map((name) => `llama.models.${name}`).join(", ") : "no config entry"}`);
  }
  for (const partial of catalog.partial) {
    lines.push(`  ${path.basename(partial.path)}  ${formatBytes(partial.bytes)} so far: an unfinished download (pull it again to resume, or \`local-ai models rm ${partial.file}\`)`);
  }
  for (const missing of catalog.notDownloaded) lines.push(`  not downloaded: llama.models.${missing.model} (${missing.ref}): \`local-ai pull ${missing.ref}\``);
  return `${lines.join("\n")}\n`;
}
