import { formatBytes } from "../../shared/format-bytes.js";
import { formatParams } from "./plan-alternatives.js";
import type { ModelPlanEntry, ModelPlanReport } from "./plan-types.js";
import { describeToolShare, toolShareFix } from "./tool-schema-budget.js";

export interface RenderPlanOptions {
  /** ANSI colors; only on a TTY. */
  color: boolean;
}

const GREEN = "\u001b[32m";
const YELLOW = "\u001b[33m";
const RED = "\u001b[31m";
const DIM = "\u001b[2m";
const BOLD = "\u001b[1m";
const RESET = "\u001b[0m";
const INDENT = "        ";

/**
 * The human form of a plan report: the machine, then per model its verdict, the reason sentence,
 * the estimates and (llama-server) the command line; ends with a summary line.
 */
export function renderPlan(report: ModelPlanReport, options: RenderPlanOptions): string {
  const paint = (code: string, text: string): string => (options.color ? `${code}${text}${RESET}` : text);
  const lines: string[] = [`${paint(BOLD, "Machine:")} ${report.hardware.summary}`, ""];
  for (const entry of report.models) lines.push(...renderEntry(entry, paint), "");
  for (const note of report.notes) lines.push(`${paint(DIM, "note:")} ${note}`);
  if (report.notes.length > 0) lines.push("");
  const failed = report.models.filter((entry) => entry.status === "error").length;
  const count = `${report.models.length} model${report.models.length === 1 ? "" : "s"}`;
  if (report.models.length === 0) lines.push("No model is configured under llama.models.");
  else if (failed === 0) lines.push(paint(GREEN, `${count} planned: every model fits.`));
  else lines.push(paint(RED, `${count}, ${failed} cannot be planned: fix what is said above and run \`local-ai plan\` again.`));
  return `${lines.join("\n")}\n`;
}

function renderEntry(entry: ModelPlanEntry, paint: (code: string, text: string) => string): string[] {
  const verdict = entry.status === "ok" ? paint(GREEN, "+ ok  ") : paint(RED, "x FAIL");
  const facts = entry.model
    ? `: ${entry.model.architecture}, ${formatParams(entry.model.parameters)} params, ${entry.model.quantization}, trained ctx ${entry.model.trainContextSize ?? "unknown"}`
    : "";
  const name = entry.ref !== undefined ? `${entry.ref} [as llama.models.${entry.name}]` : entry.name;
  const lines = [`${verdict}  ${paint(BOLD, name)} (${entry.engine})${facts}`];
  if (entry.remote) lines.push(`${INDENT}${entry.remote.summary} (no local plan)`);
  if (entry.error) lines.push(...entry.error.message.split("\n").map((line) => `${INDENT}${line}`), `${INDENT}${paint(DIM, `[${entry.error.code}]`)}`);
  const plan = entry.plan;
  if (plan) {
    const e = plan.estimates;
    lines.push(
      `${INDENT}${plan.reason}`,
      `${INDENT}${paint(DIM, "plan:")} gpu_layers ${plan.gpuLayers}/${plan.totalLayers}, ctx_size ${plan.ctxSize}, threads ${plan.threads}`,
      `${INDENT}${paint(DIM, "estimates:")} weights ${formatBytes(e.weightsBytes)}, KV cache ${formatBytes(e.kvCacheBytes)}, compute ${formatBytes(e.computeBytes)} = ${formatBytes(e.totalBytes)} (RAM ${formatBytes(e.ramBytes)}, VRAM ${formatBytes(e.vramBytes)})`,
    );
    for (const note of plan.notes) lines.push(`${INDENT}${paint(DIM, "note:")} ${note}`);
    if (plan.command) lines.push(`${INDENT}${paint(DIM, "command:")} ${plan.command.map(shellQuote).join(" ")}`);
  }
  for (const share of entry.toolSchemas ?? []) {
    if (share.verdict === "ok") lines.push(`${INDENT}${paint(DIM, "tools:")} agent ${share.agent}: ${describeToolShare(share)}`);
    else lines.push(`${INDENT}${paint(YELLOW, "warn:")} agent ${share.agent}: ${describeToolShare(share)}`, `${INDENT}${paint(DIM, "fix:")} ${toolShareFix(share)}`);
  }
  return lines;
}

/** Copy-pasteable into a POSIX shell; plain words stay unquoted. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}
