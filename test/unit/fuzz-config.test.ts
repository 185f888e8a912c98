import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { parse, stringify } from "yaml";
import { parseConfigText, type ParseResult } from "../../src/config/load-config.js";
import { fuzzParams } from "../helpers/fuzz-runs.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const EXAMPLE = readFileSync(path.join(REPO, "config.example.yaml"), "utf8");
const BASE = "/srv/app";

/** The parser's promise: it never throws, and a refusal lists problems precise enough to act on. */
function checkResult(result: ParseResult, text: string): void {
  if (result.ok) return;
  assert.ok(result.problems.length > 0, "a refused config names at least one problem");
  const lines = text.split("\n").length;
  for (const problem of result.problems) {
    assert.equal(typeof problem.path, "string");
    assert.ok(problem.message.length > 0);
    assert.ok(!problem.message.includes("Invalid input"), `a bare zod message: ${problem.message}`);
    if (problem.line !== undefined) assert.ok(Number.isInteger(problem.line) && problem.line >= 1 && problem.line <= lines + 1, `line ${problem.line} of ${lines}`);
    if (problem.found !== undefined) assert.ok(problem.found.length <= 60);
  }
}

function parseSafely(text: string, env: Record<string, string | undefined> = {}): ParseResult {
  let result: ParseResult | undefined;
  assert.doesNotThrow(() => {
    result = parseConfigText(text, env, BASE);
  });
  return result as ParseResult;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every key path of the example, objects and leaves alike. */
function pathsOf(value: Json, prefix: string[] = []): string[][] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [prefix];
  return [prefix, ...Object.entries(value).flatMap(([key, child]) => pathsOf(child, [...prefix, key]))];
}

const example = parse(EXAMPLE) as Json;
const examplePaths = pathsOf(example).filter((segments) => segments.length > 0);

function mutate(root: Json, segments: string[], change: { kind: "set"; value: Json } | { kind: "delete" } | { kind: "rename"; to: string }): Json {
  const copy = structuredClone(root) as { [key: string]: Json };
  let parent = copy;
  for (const segment of segments.slice(0, -1)) parent = parent[segment] as { [key: string]: Json };
  const last = segments[segments.length - 1] as string;
  if (change.kind === "set") parent[last] = change.value;
  else if (change.kind === "delete") delete parent[last];
  else {
    const value = parent[last] as Json;
    delete parent[last];
    parent[change.to] = value;
  }
  return copy;
}

const hostileValue: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom(-1, 0, 1.5, 1e300, -1e300, 65536, "", "auto", "../../../etc", "\u0000", true, false, null, "yes", "0x10", "1e3"),
  fc.string({ maxLength: 30 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
);
// "$" is left out of new key names: `$$` is the env-substitution escape, so the key would change.
const change = fc.oneof(
  { weight: 5, arbitrary: hostileValue.map((value) => ({ kind: "set" as const, value })) },
  { weight: 1, arbitrary: fc.constant({ kind: "delete" as const }) },
  { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 12 }).filter((to) => !to.includes("$")).map((to) => ({ kind: "rename" as const, to })) },
);

// YAML-ish noise: indentation, anchors, tags, flow collections, env references.
const yamlToken = fc.constantFrom("\n", "  ", ": ", "- ", "app", "llama", "models", "agents", "mcp", "http", "stdio", "{", "}", "[", "]", ",", "&a ", "*a", "!!str ", "!!binary ", "'", '"', "#", "${HOME}", "${X:-y}", "${", "<<: *a", "---\n", "...", "\t", "%YAML 1.2\n", "? ");
const yamlNoise = fc.array(fc.oneof(yamlToken, fc.string({ maxLength: 8 })), { maxLength: 60 }).map((parts) => parts.join(""));

describe("parseConfigText (fuzzed)", () => {
  it("never throws on arbitrary text; a refusal always lists problems", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300 }), yamlNoise), (text) => {
        checkResult(parseSafely(text), text);
      }),
      fuzzParams(400),
    );
  });

  it("one change to the example: never throws, and a refusal names the changed key (or a key below or above it)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...examplePaths), change, (segments, what) => {
        const text = stringify(mutate(example, segments, what));
        const result = parseSafely(text);
        checkResult(result, text);
        if (result.ok) return;
        const changed = what.kind === "rename" ? [...segments.slice(0, -1), what.to] : segments;
        // Dotted paths compared as strings: a fuzzed key may itself hold a dot.
        const target = changed.join(".");
        const related = (problemPath: string): boolean => problemPath === "" || target.startsWith(problemPath) || problemPath.startsWith(target);
        assert.ok(
          // A cross-reference (an agent's model) names the changed key in its message instead.
          result.problems.some((problem) => related(problem.path) || problem.message.includes(target) || (changed.length > 1 && problem.message.includes(changed.slice(0, -1).join(".")))),
          `changed ${changed.join(".")} (${what.kind}); problems at ${result.problems.map((p) => p.path || "(root)").join(", ")}`,
        );
      }),
      fuzzParams(200),
    );
  });

  it("environment references with any value never throw", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), fc.option(fc.string({ maxLength: 40 }), { nil: undefined }), fc.constantFrom(...examplePaths), (name, value, segments) => {
        const text = stringify(mutate(example, segments, { kind: "set", value: `\${${name}}` }));
        checkResult(parseSafely(text, { [name]: value }), text);
      }),
      fuzzParams(200),
    );
  });
});

describe("parseConfigText: cases the fuzzer found", () => {
  it("an alias to no anchor, and an alias bomb, are problems rather than exceptions", () => {
    assert.deepEqual(parseSafely("*-"), { ok: false, problems: [{ path: "", message: "YAML: Unresolved alias (the anchor must be set before the alias): -" }] });
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]", ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(", ")}]`)].join("\n");
    const result = parseSafely(bomb);
    assert.ok(!result.ok && result.problems.length === 1 && /^YAML: Excessive alias count/.test(result.problems[0]?.message ?? ""), JSON.stringify(result));
  });

  it("a scalar where a section belongs says which keys the section takes", () => {
    assert.deepEqual(parseSafely("app: 3"), {
      ok: false,
      problems: [{ path: "app", message: "must be a mapping with keys among data_dir, models_dir, log_level, max_steps, max_parse_errors, max_tool_output_bytes", found: "3", line: 1 }],
    });
  });
});
