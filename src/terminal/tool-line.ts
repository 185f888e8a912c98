import type { ToolStatus } from "../agent/events.js";
import type { TerminalStyle } from "./terminal-style.js";

/** A value as one line of at most `max` characters (JSON for anything that is not a string). */
export function oneLine(value: unknown, max: number): string {
  const text = (typeof value === "string" ? value : (JSON.stringify(value) ?? String(value))).replace(/\s*[\r\n]+\s*/g, " ");
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(1, max - 1))}…`;
}

/** The arguments part of a tool line gets at most this share of the width, so the status fits after it. */
const ARGS_SHARE = 0.6;

/** `[tool] echo {"message":"hi"}`: the start of a tool line, written when the call starts. */
export function toolStartText(tool: string, args: unknown, width: number, style: TerminalStyle): { text: string; visible: string } {
  const argsText = oneLine(args, Math.max(10, Math.floor(width * ARGS_SHARE) - tool.length));
  return { text: `${style.dim("[tool]")} ${style.bold(tool)} ${style.dim(argsText)}`, visible: `[tool] ${tool} ${argsText}` };
}

const STATUS_COLOR: Record<ToolStatus, keyof Pick<TerminalStyle, "green" | "red" | "yellow">> = {
  ok: "green",
  error: "red",
  timeout: "red",
  cancelled: "yellow",
  denied: "yellow",
  approval_required: "yellow",
};

/** ` -> ok 12ms | Echo: hi`: the end of a tool line; `used` is how many columns the line already takes. */
export function toolDoneText(status: ToolStatus, ms: number, preview: string, used: number, width: number, style: TerminalStyle): string {
  const head = ` -> ${status}${status === "ok" || ms > 0 ? ` ${formatMs(ms)}` : ""}`;
  const room = width - used - head.length - 3;
  const tail = preview === "" || room < 8 ? "" : ` | ${oneLine(preview, room)}`;
  return `${style[STATUS_COLOR[status]](head)}${style.dim(tail)}`;
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`;
}
