import { readdirSync } from "node:fs";
import path from "node:path";

/** Every .ts file under `dir`, recursively. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

/** Relative specifiers of static imports, re-exports and dynamic imports (type-only ones included). */
export function relativeImports(text: string): string[] {
  const found: string[] = [];
  const patterns = [/\bfrom\s+"(\.{1,2}\/[^"]+)"/g, /\bimport\s*\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g, /^\s*import\s+"(\.{1,2}\/[^"]+)"/gm];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.push(match[1]!);
  return found;
}

/** Nodes on a cycle of a directed graph, first node repeated at the end; null when there is none (DFS colouring). */
export function cycleIn(edges: ReadonlyArray<{ from: string; to: string }>): string[] | null {
  const next = new Map<string, Set<string>>();
  for (const edge of edges) next.set(edge.from, (next.get(edge.from) ?? new Set()).add(edge.to));
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string): string[] | null => {
    state.set(node, "open");
    stack.push(node);
    for (const target of next.get(node) ?? []) {
      if (state.get(target) === "open") return [...stack.slice(stack.indexOf(target)), target];
      if (state.get(target) === undefined) {
        const cycle = visit(target);
        if (cycle) return cycle;
      }
    }
    stack.pop();
    state.set(node, "done");
    return null;
  };
  for (const node of next.keys()) {
    if (state.get(node) === undefined) {
      const cycle = visit(node);
      if (cycle) return cycle;
    }
  }
  return null;
}
