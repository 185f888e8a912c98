import { RuntimeError } from "./runtime-error.js";

/** Letters, digits, `_`, `-`, `.`; 1-64 characters; not starting with `.` (no `..`, no hidden files). */
const SAFE_ID = /^(?!\.)[A-Za-z0-9_.-]{1,64}$/;

export function isSafeId(value: string): boolean {
  return SAFE_ID.test(value);
}

/**
 * Ids become folder names under data_dir, so anything else is refused before it reaches a path:
 * `../x`, `a/b`, `.ssh`, empty, over-long, NUL bytes.
 */
export function assertSafeId(kind: "user_id" | "session_id" | "agent", value: string): string {
  if (!isSafeId(value)) {
    throw new RuntimeError(
      "invalid_request",
      `${kind} ${JSON.stringify(value.slice(0, 80))} is not allowed: use 1-64 letters, digits, "_", "-" or "." and do not start with "."`,
      { details: { param: kind } },
    );
  }
  return value;
}
