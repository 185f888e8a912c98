import type { CheckResult } from "./doctor-report.js";

/**
 * Constructors for check results. `warn` and `fail` take the fix as a required argument, so a
 * non-ok check without advice is a compile error rather than a report that leaves the user stuck.
 */
export function ok(id: string, title: string, finding: string, data?: Record<string, unknown>): CheckResult {
  return { id, title, status: "ok", finding, ...(data === undefined ? {} : { data }) };
}

export function warn(id: string, title: string, finding: string, fix: string, data?: Record<string, unknown>): CheckResult {
  return { id, title, status: "warn", finding, fix, ...(data === undefined ? {} : { data }) };
}

export function fail(id: string, title: string, finding: string, fix: string, data?: Record<string, unknown>): CheckResult {
  return { id, title, status: "fail", finding, fix, ...(data === undefined ? {} : { data }) };
}

/** First line of an error message, so a finding stays one line. */
export function firstLine(text: string): string {
  return (text.split(/\r?\n/).find((line) => line.trim() !== "") ?? text).trim();
}
