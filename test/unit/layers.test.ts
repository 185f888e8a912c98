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
 * src/http: one folder per API dialect (OpenAI chat/completions/embeddings, Responses, Messages).
 * A dialect imports only shared src/http files (and lower layers), never another dialect; shared
 * files import no dialect (app.ts, the composition of the routes, is the one exception); and no
 * file of src/http is on an import cycle.
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

  it("no file of src/http is on an import cycle", () => {
    assert.equal(cycleIn(edges)?.join(" -> ") ?? null, null);
  });

  it("the rules catch a violation (self-check on made-up edges)", () => {
    const fake: HttpEdge[] = [
      { from: path.join("responses", "route.ts"), to: path.join("openai", "completion.ts") },
      { from: "session-gate.ts", to: path.join("openai", "errors.ts") },
      { from: "app.ts", to: path.join("responses", "route.ts") },
      { from: path.join("openai", "a.ts"), to: path.join("openai", "b.ts") },
      { from: path.join("openai", "b.ts"), to: path.join("openai", "a.ts") },
    ];
    assert.equal(dialectViolations(fake).length, 2);
    assert.deepEqual(cycleIn(fake), [path.join("openai", "a.ts"), path.join("openai", "b.ts"), path.join("openai", "a.ts")]);
  });
});
