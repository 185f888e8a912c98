import { randomBytes } from "node:crypto";
import { access, rename, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { formatProblem } from "../../config/config-problem.js";
import { parseConfigText } from "../../config/load-config.js";
import { isModelReference } from "../../config/model-reference.js";
import { DEFAULT_MODEL_REFERENCE, renderStarterConfig } from "../../config/starter-config.js";

export interface InitOptions {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  /** A GGUF file, an https:// URL or an hf: reference; DEFAULT_MODEL_REFERENCE when absent. */
  model?: string | undefined;
  force: boolean;
}

/** A command to run next; `pull` marks the download step, which `init --pull` does itself. */
export interface NextStep {
  command: string;
  why: string;
  kind?: "pull";
}

export type InitOutcome =
  | { ok: true; path: string; model: string; remote: boolean; overwritten: boolean; notes: string[]; next: NextStep[] }
  | { ok: false; reason: "exists" | "invalid" | "write_failed"; message: string };

/**
 * `local-ai init`: writes a starter config.yaml in the current folder, validated by the real
 * config loader before a byte is written, never over an existing file without `force` (the
 * no-force write is an exclusive create, so a file appearing meanwhile is not overwritten either).
 */
export async function initConfig(options: InitOptions): Promise<InitOutcome> {
  const file = path.join(options.cwd, "config.yaml");
  const model = options.model ?? DEFAULT_MODEL_REFERENCE;
  if (model.trim() === "") return { ok: false, reason: "invalid", message: "--model is empty: give a GGUF file, an https:// URL or an hf: reference" };
  const text = renderStarterConfig(model);
  const parsed = parseConfigText(text, options.env, options.cwd);
  if (!parsed.ok) {
    return { ok: false, reason: "invalid", message: `the config for --model ${model} does not validate:\n${parsed.problems.map((problem) => `  ${formatProblem(file, problem)}`).join("\n")}` };
  }
  let overwritten = false;
  try {
    if (options.force) overwritten = await replaceFile(file, text);
    else await writeFile(file, text, { flag: "wx" });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return { ok: false, reason: "exists", message: `${file} already exists; nothing was written (pass --force to replace it)` };
    return { ok: false, reason: "write_failed", message: `cannot write ${file}: ${(error as Error).message}` };
  }
  const remote = isModelReference(model);
  const notes: string[] = [];
  if (!remote && !(await exists(path.resolve(options.cwd, model)))) notes.push(`${path.resolve(options.cwd, model)} does not exist yet: put the GGUF file there, or run init again with --model <file | https:// URL | hf:owner/repo:quant>`);
  // With LOCAL_AI_CONFIG set, the commands would read that file instead of this one.
  const config = options.env.LOCAL_AI_CONFIG !== undefined && options.env.LOCAL_AI_CONFIG !== "" ? " --config config.yaml" : "";
  const next: NextStep[] = [
    ...(remote ? [{ command: `local-ai pull ${model}${config}`, why: "download the model (it checks first that the model fits this machine)", kind: "pull" as const }] : []),
    { command: `local-ai doctor${config}`, why: "check the machine, the config and the model" },
    { command: `local-ai chat${config}`, why: "chat with the assistant in the terminal" },
  ];
  return { ok: true, path: file, model, remote, overwritten, notes, next };
}

/** Temp file and rename: an interrupted --force leaves the old config or the new one, never half of one. */
async function replaceFile(file: string, text: string): Promise<boolean> {
  const existed = await exists(file);
  const temp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(temp, text, { flag: "wx" });
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  return existed;
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}
