import type { z } from "zod";

type Issue = z.core.$ZodIssue;

/**
 * An mcp.servers entry is a stdio server or a remote one; zod reports a bad entry as one
 * "Invalid input" for the whole union. The entry's own shape says which it meant (a `url`: remote),
 * so that option's issues are reported instead, at their full paths.
 */
export function expandServerIssues(issues: readonly Issue[], isServerPath: (path: readonly PropertyKey[]) => boolean, valueAt: (path: readonly PropertyKey[]) => unknown): Issue[] {
  return issues.flatMap((issue) => {
    if (issue.code !== "invalid_union" || !isServerPath(issue.path) || issue.errors.length !== 2) return [issue];
    const value = valueAt(issue.path);
    const remote = value !== null && typeof value === "object" && "url" in value;
    const chosen = issue.errors[remote ? 1 : 0] ?? [];
    return chosen.map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }));
  });
}
