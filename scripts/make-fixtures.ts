// Writes the GGUF fixture models (or finds them cached) and reports where they are.
//   node dist/scripts/make-fixtures.js [--out DIR] [--kinds tiny,demo,demo-tools,bench-small]
// stderr: one human line per fixture; stdout: one JSON line summary.
import { stat } from "node:fs/promises";
import {
  ensureFixture, fixtureCacheDir, fixturePath, type FixtureCacheSettings, type FixtureKind, type FixtureOptionsByKind,
} from "../test/fixtures/gguf/fixture-cache.js";

type FixtureSpec = { [K in FixtureKind]: { readonly kind: K; readonly opts: FixtureOptionsByKind[K] } }[FixtureKind];

const FIXTURES = {
  tiny: { kind: "tiny", opts: {} },
  demo: { kind: "demo", opts: {} },
  "demo-tools": { kind: "demo", opts: { toolMode: true } },
  "bench-small": { kind: "bench", opts: { shape: "small" } },
  "bench-0.5b": { kind: "bench", opts: { shape: "0.5b" } },
} as const satisfies Record<string, FixtureSpec>;
type FixtureName = keyof typeof FIXTURES;
const DEFAULT_KINDS: readonly FixtureName[] = ["tiny", "demo", "demo-tools", "bench-small"];

interface Args {
  readonly out?: string;
  readonly kinds: readonly FixtureName[];
}

function parseArgs(argv: readonly string[]): Args {
  let out: string | undefined;
  let kinds = DEFAULT_KINDS;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === "--out") out = value();
    else if (arg === "--kinds") kinds = value().split(",").filter((k) => k !== "").map(toFixtureName);
    else if (arg === "--help" || arg === "-h") {
      process.stderr.write(`usage: make-fixtures [--out DIR] [--kinds ${Object.keys(FIXTURES).join(",")}]\n`);
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}`);
  }
  return out === undefined ? { kinds } : { out, kinds };
}

function toFixtureName(kind: string): FixtureName {
  if (!Object.hasOwn(FIXTURES, kind)) throw new Error(`unknown kind ${kind}; known: ${Object.keys(FIXTURES).join(", ")}`);
  return kind as FixtureName;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const settings: FixtureCacheSettings = args.out === undefined ? {} : { dir: args.out };
  const results = [];
  for (const kind of args.kinds) {
    const spec: FixtureSpec = FIXTURES[kind];
    const cached = await stat(fixturePath(spec.kind, spec.opts, settings)).then((s) => s.size > 0, () => false);
    const started = performance.now();
    const path = await ensureFixture(spec.kind, spec.opts, settings);
    const ms = Math.round(performance.now() - started);
    const bytes = (await stat(path)).size;
    process.stderr.write(`${kind}: ${path} (${(bytes / 1e6).toFixed(2)} MB, ${cached ? "cached" : `written in ${ms} ms`})\n`);
    results.push({ kind, path, bytes, cached, ms });
  }
  process.stdout.write(`${JSON.stringify({ dir: fixtureCacheDir(settings), fixtures: results })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`make-fixtures: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
