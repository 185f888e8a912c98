import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

/**
 * The import direction of docs/architecture.md, enforced: a module may import only from its own
 * top-level folder or from a folder of a lower layer. Folders of one layer (the front doors; engine,
 * tools and store) never import each other. Reads the TypeScript sources, so it runs before any
 * bundling could hide an import.
 */
const LAYER: Readonly<Record<string, number>> = {
  shared: 0,
  config: 1,
  logging: 2,
  engine: 3,
  tools: 3,
  store: 3,
  // Model references and downloads: plans with engine/plan, checked by diagnostics.
  models: 3.5,
  diagnostics: 4,
  agent: 5,
  wire: 6,
  protocol: 7,
  http: 7,
  pod: 7,
  acp: 7,
  terminal: 7,
  // The host-side client reads the protocol's types (type-only imports: nothing loads at run time).
  client: 7.5,
  app: 8,
  cli: 9,
};

const srcDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../src");

interface Edge {
  file: string;
  from: string;
  to: string;
  specifier: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

/** Relative specifiers of static imports, re-exports and dynamic imports (type-only ones included). */
function relativeImports(text: string): string[] {
  const found: string[] = [];
  const patterns = [/\bfrom\s+"(\.{1,2}\/[^"]+)"/g, /\bimport\s*\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g, /^\s*import\s+"(\.{1,2}\/[^"]+)"/gm];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.push(match[1]!);
  return found;
}

function topFolder(file: string): string {
  return path.relative(srcDir, file).split(path.sep)[0]!;
}

function crossFolderEdges(): Edge[] {
  const edges: Edge[] = [];
  for (const file of sourceFiles(srcDir)) {
    const from = topFolder(file);
    for (const specifier of relativeImports(readFileSync(file, "utf8"))) {
      const to = topFolder(path.resolve(path.dirname(file), specifier));
      if (to !== from) edges.push({ file: path.relative(srcDir, file), from, to, specifier });
    }
  }
  return edges;
}

/** Folders on a cycle of the folder graph (Tarjan would do; a DFS colouring is enough here). */
function cycleIn(edges: readonly Edge[]): string[] | null {
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

describe("architecture: import direction", () => {
  const edges = crossFolderEdges();

  it("reads the sources (the check cannot pass by seeing nothing)", () => {
    assert.ok(sourceFiles(srcDir).length > 100, `expected the TypeScript sources under ${srcDir}`);
    assert.ok(edges.length > 100, "cross-folder imports were found");
  });

  it("every top-level folder of src/ has a layer", () => {
    const folders = readdirSync(srcDir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    const unknown = folders.filter((folder) => LAYER[folder] === undefined);
    assert.deepEqual(unknown, [], "add the new folder to LAYER here and to docs/architecture.md");
  });

  it("imports only flow down, and folders of one layer never import each other", () => {
    const wrong = edges
      .filter((edge) => !((LAYER[edge.from] ?? -1) > (LAYER[edge.to] ?? Infinity)))
      .map((edge) => `${edge.file} (${edge.from}) imports ${edge.specifier} (${edge.to})`);
    assert.deepEqual(wrong, []);
  });

  it("the folder graph has no cycle", () => {
    assert.equal(cycleIn(edges)?.join(" -> ") ?? null, null);
  });

  it("the rules catch a violation (self-check on a made-up edge set)", () => {
    const fake: Edge[] = [
      { file: "engine/x.ts", from: "engine", to: "diagnostics", specifier: "../diagnostics/y.js" },
      { file: "diagnostics/y.ts", from: "diagnostics", to: "engine", specifier: "../engine/x.js" },
    ];
    assert.deepEqual(cycleIn(fake), ["engine", "diagnostics", "engine"]);
    assert.equal(fake.filter((edge) => !(LAYER[edge.from]! > LAYER[edge.to]!)).length, 1);
  });
});
