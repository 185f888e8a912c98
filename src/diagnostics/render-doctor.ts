import type { CheckStatus, DoctorReport } from "./doctor-report.js";

export interface RenderOptions {
  /** ANSI colors; only for a TTY, so piped output and logs stay plain text. */
  color: boolean;
}

const LABEL: Record<CheckStatus, string> = { ok: "ok", warn: "WARN", fail: "FAIL" };
/** Plain-text symbols work in every terminal font; the word carries the meaning without color. */
const SYMBOL: Record<CheckStatus, string> = { ok: "+", warn: "!", fail: "x" };
const ANSI: Record<CheckStatus, string> = { ok: "\u001b[32m", warn: "\u001b[33m", fail: "\u001b[31m" };
const DIM = "\u001b[2m";
const BOLD = "\u001b[1m";
const RESET = "\u001b[0m";

/**
 * One row per check: status, title, finding; each non-ok check gets its fix on an indented line
 * below, aligned with the finding column. Ends with a one-line summary.
 */
export function renderDoctorTable(report: DoctorReport, options: RenderOptions): string {
  const paint = (code: string, text: string): string => (options.color ? `${code}${text}${RESET}` : text);
  const statusWidth = Math.max(...Object.values(LABEL).map((label) => label.length)) + 2;
  const titleWidth = Math.max(5, ...report.checks.map((check) => check.title.length));
  const indent = " ".repeat(statusWidth + 2 + titleWidth + 2);
  const lines: string[] = [
    paint(BOLD, `${"".padEnd(statusWidth)}  ${"CHECK".padEnd(titleWidth)}  FINDING`),
  ];
  for (const check of report.checks) {
    const status = `${SYMBOL[check.status]} ${LABEL[check.status]}`.padEnd(statusWidth);
    lines.push(`${paint(ANSI[check.status], status)}  ${check.title.padEnd(titleWidth)}  ${oneLine(check.finding)}`);
    if (check.status !== "ok" && check.fix !== undefined) {
      lines.push(`${indent}${paint(DIM, "fix:")} ${oneLine(check.fix)}`);
    }
  }
  lines.push("", summaryLine(report, paint));
  return `${lines.join("\n")}\n`;
}

function summaryLine(report: DoctorReport, paint: (code: string, text: string) => string): string {
  const { ok, warn, fail } = report.summary;
  const counts = `${ok} ok, ${warn} warning${warn === 1 ? "" : "s"}, ${fail} failed`;
  if (fail > 0) return paint(ANSI.fail, `${counts}: fix the failed check${fail === 1 ? "" : "s"} above and run \`local-ai doctor\` again.`);
  if (warn > 0) return paint(ANSI.warn, `${counts}: local-ai can run; the warnings above may still matter.`);
  return paint(ANSI.ok, `${counts}: everything local-ai needs is in place.`);
}

/**
 * A finding is one line by contract; guard the table against a stray newline from an OS message
 * and against control characters (a binary's output or a file name could carry escape sequences).
 */
function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\s*\r?\n\s*/g, " ").replace(/[\u0000-\u001f\u007f]/g, "?");
}
