import type { Command } from "commander";
import { configOrDefaults } from "../../config/config-or-defaults.js";
import { formatBytes } from "../../shared/format-bytes.js";
import type { CliDeps } from "../cli-deps.js";
import { writeOut } from "../write-out.js";

interface PsOptions {
  url?: string;
  token?: string;
  json?: boolean;
  config?: string;
}

/** One entry of GET /v1/ps. */
export interface PsRow {
  id: string;
  context_length?: number | null;
  memory: { ram_bytes: number; vram_bytes: number; measured: boolean };
  expires_at: string | null;
  pinned: boolean;
  in_flight: number;
}

/** `local-ai ps`: exit 0 with the table, 1 when the server cannot be reached or refuses. */
export async function runPsCommand(command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<PsOptions>();
  const url = options.url ?? (await defaultUrl(options.config, deps));
  try {
    const response = await fetch(new URL("/v1/ps", url), { headers: options.token === undefined ? {} : { authorization: `Bearer ${options.token}` } });
    const body = (await response.json()) as { data?: PsRow[]; error?: { message?: string } };
    if (!response.ok || body.data === undefined) throw new Error(body.error?.message ?? `HTTP ${response.status}`);
    await writeOut(deps.stdout, options.json === true ? `${JSON.stringify(body, null, 2)}\n` : renderPs(body.data, Date.now()));
    deps.setExitCode(0);
  } catch (error) {
    deps.stderr.write(`local-ai ps: ${url}: ${error instanceof Error ? error.message : String(error)} (is \`local-ai serve-http\` running there?)\n`);
    deps.setExitCode(1);
  }
}

async function defaultUrl(configFile: string | undefined, deps: CliDeps): Promise<string> {
  const { config } = await configOrDefaults(configFile, deps).catch(() => ({ config: undefined }));
  const host = config?.http.host ?? "127.0.0.1";
  return `http://${host.includes(":") ? `[${host}]` : host}:${config?.http.port ?? 8080}`;
}

/** NAME, SIZE, PROCESSOR ("100% CPU", "48%/52% CPU/GPU"), CONTEXT, UNTIL. */
export function renderPs(rows: readonly PsRow[], now: number): string {
  const table = [["NAME", "SIZE", "PROCESSOR", "CONTEXT", "UNTIL"]];
  for (const row of rows) {
    const total = row.memory.ram_bytes + row.memory.vram_bytes;
    table.push([row.id, `${formatBytes(total)}${row.memory.measured ? "" : " (est.)"}`, processor(row.memory.ram_bytes, row.memory.vram_bytes), row.context_length === undefined || row.context_length === null ? "-" : String(row.context_length), until(row, now)]);
  }
  const widths = table[0]?.map((_, column) => Math.max(...table.map((line) => (line[column] ?? "").length))) ?? [];
  return `${table.map((line) => line.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("   ").trimEnd()).join("\n")}\n`;
}

function processor(ram: number, vram: number): string {
  const total = ram + vram;
  if (total === 0 || vram === 0) return "100% CPU";
  if (ram === 0) return "100% GPU";
  const cpu = Math.round((ram / total) * 100);
  return `${cpu}%/${100 - cpu}% CPU/GPU`;
}

function until(row: PsRow, now: number): string {
  if (row.pinned) return "pinned";
  if (row.in_flight > 0) return "in use";
  if (row.expires_at === null) return "Forever";
  const seconds = Math.max(0, Math.round((Date.parse(row.expires_at) - now) / 1000));
  return seconds < 120 ? `${seconds} seconds from now` : `${Math.round(seconds / 60)} minutes from now`;
}
