import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { cycleIn, relativeImports, sourceFiles } from "../helpers/source-imports.js";

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
  // The serving core every front door sits on: the line server (read loop, stop latch, settle, flush) that
  // the stdio dialects plug into, and the settle step the Pod and HTTP share.
  serving: 6.5,
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

/**
 * Inside a top-level folder, no file is on an import cycle, and no two of its sub-folders (such as
 * engine/embedded and engine/plan) import each other (a cycle means the shared part belongs in a file of its own). Type-only imports count:
 * they tie the files together as much as value imports.
 */
interface FileEdge {
  from: string;
  to: string;
}

function sameFolderFileEdges(): FileEdge[] {
  return sourceFiles(srcDir).flatMap((file) =>
    relativeImports(readFileSync(file, "utf8"))
      .map((specifier) => path.resolve(path.dirname(file), specifier.replace(/\.js$/, ".ts")))
      .filter((target) => topFolder(target) === topFolder(file))
      .map((target) => ({ from: path.relative(srcDir, file), to: path.relative(srcDir, target) })),
  );
}

/** The sub-folder of a top-level folder a file lies in (the top folder itself for files at its root). */
function subFolderOf(file: string): string {
  const parts = file.split(path.sep);
  return parts.length > 2 ? parts.slice(0, 2).join("/") : parts[0]!;
}

/** Edges between sibling sub-folders (a folder's own files and its sub-folders may use each other). */
function subFolderEdges(edges: readonly FileEdge[]): FileEdge[] {
  return edges
    .map((edge) => ({ from: subFolderOf(edge.from), to: subFolderOf(edge.to) }))
    .filter((edge) => edge.from !== edge.to && edge.from.includes("/") && edge.to.includes("/"));
}

describe("architecture: no import cycle inside a folder", () => {
  const edges = sameFolderFileEdges();

  it("reads the files' imports inside folders (the check cannot pass by seeing nothing)", () => {
    assert.ok(edges.length > 100);
    assert.ok(edges.some((edge) => edge.from === path.join("agent", "session-runner.ts")));
  });

  it("no file of src/ is on an import cycle", () => {
    assert.equal(cycleIn(edges)?.join(" -> ") ?? null, null);
  });

  it("no two sub-folders of a top-level folder import each other (engine/embedded and engine/plan share engine/llama)", () => {
    assert.equal(cycleIn(subFolderEdges(edges))?.join(" -> ") ?? null, null);
  });

  it("the rules catch a violation (self-check on made-up edges)", () => {
    const fileCycle: FileEdge[] = [
      { from: path.join("agent", "a.ts"), to: path.join("agent", "b.ts") },
      { from: path.join("agent", "b.ts"), to: path.join("agent", "a.ts") },
    ];
    assert.deepEqual(cycleIn(fileCycle), [path.join("agent", "a.ts"), path.join("agent", "b.ts"), path.join("agent", "a.ts")]);
    const folderCycle: FileEdge[] = [
      { from: path.join("engine", "x", "a.ts"), to: path.join("engine", "y", "b.ts") },
      { from: path.join("engine", "y", "c.ts"), to: path.join("engine", "x", "d.ts") },
    ];
    assert.equal(cycleIn(folderCycle), null);
    assert.deepEqual(cycleIn(subFolderEdges(folderCycle)), ["engine/x", "engine/y", "engine/x"]);
  });
});

/**
 * src/http: one folder per API dialect (OpenAI chat/completions/embeddings, Responses, Messages).
 * A dialect imports only shared src/http files (and lower layers), never another dialect; shared
 * files import no dialect (app.ts, the composition of the routes, is the one exception). Cycles:
 * the folder-wide check above.
 */
const DIALECTS = ["openai", "responses", "messages"] as const;
const httpDir = path.join(srcDir, "http");

interface HttpEdge {
  from: string;
  to: string;
}

function httpFileEdges(): HttpEdge[] {
  return sourceFiles(httpDir).flatMap((file) =>
    relativeImports(readFileSync(file, "utf8"))
      .map((specifier) => path.resolve(path.dirname(file), specifier.replace(/\.js$/, ".ts")))
      .filter((target) => target.startsWith(httpDir + path.sep))
      .map((target) => ({ from: path.relative(httpDir, file), to: path.relative(httpDir, target) })),
  );
}

function dialectOf(file: string): string | null {
  const first = file.split(path.sep)[0]!;
  return (DIALECTS as readonly string[]).includes(first) && file.includes(path.sep) ? first : null;
}

function dialectViolations(edges: readonly HttpEdge[]): string[] {
  return edges
    .filter((edge) => {
      const from = dialectOf(edge.from);
      const to = dialectOf(edge.to);
      if (to === null || to === from) return false;
      return !(from === null && edge.from === "app.ts");
    })
    .map((edge) => `${edge.from} imports ${edge.to}`);
}

describe("architecture: HTTP dialect folders", () => {
  const edges = httpFileEdges();

  it("reads src/http (the check cannot pass by seeing nothing)", () => {
    assert.ok(edges.some((edge) => edge.from === "app.ts" && edge.to === path.join("openai", "chat-route.ts")));
    assert.ok(edges.filter((edge) => dialectOf(edge.from) === "openai").length > 20);
  });

  it("dialects never import each other; shared files import no dialect (app.ts composes them)", () => {
    assert.deepEqual(dialectViolations(edges), []);
  });

  it("the rules catch a violation (self-check on made-up edges)", () => {
    const fake: HttpEdge[] = [
      { from: path.join("responses", "route.ts"), to: path.join("openai", "completion.ts") },
      { from: "session-gate.ts", to: path.join("openai", "errors.ts") },
      { from: "app.ts", to: path.join("responses", "route.ts") },
    ];
    assert.equal(dialectViolations(fake).length, 2);
  });
});
