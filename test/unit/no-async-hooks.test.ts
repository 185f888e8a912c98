import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { sourceFiles } from "../helpers/source-imports.js";

/**
 * On Node 20 an AsyncLocalStorage (or any async hook) runs a hook on every promise the process
 * creates from its first use on, and node-llama-cpp creates many per generated token: the log
 * scope of stdio calls and the HTTP request scope cost 5-15 % of the engine's token time on the tiny
 * model (docs/benchmarks.md, "The per-token path"). Request ids and loggers are passed instead.
 */
const srcDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../src");
const HOOKS = /\b(?:from|import)\s*\(?\s*["'](?:node:)?async_hooks["']|\bnew\s+AsyncLocalStorage\b|\bcreateHook\s*\(/u;

function offenders(files: ReadonlyArray<{ file: string; text: string }>): string[] {
  return files.filter(({ text }) => HOOKS.test(text)).map(({ file }) => file);
}

describe("no async hooks in src/ (per-promise cost on Node 20)", () => {
  const files = sourceFiles(srcDir).map((file) => ({ file: path.relative(srcDir, file), text: readFileSync(file, "utf8") }));

  it("reads the sources (the check cannot pass by seeing nothing)", () => {
    assert.ok(files.length > 300, `${files.length} files`);
    assert.ok(files.some(({ file }) => file === path.join("http", "request", "request-record.ts")));
  });

  it("no module imports node:async_hooks or creates an AsyncLocalStorage", () => {
    assert.deepEqual(offenders(files), []);
  });

  it("the check catches each form (self-check on made-up sources)", () => {
    const fake = [
      { file: "a.ts", text: 'import { AsyncLocalStorage } from "node:async_hooks";' },
      { file: "b.ts", text: "const hooks = await import('async_hooks');" },
      { file: "c.ts", text: "hooks.createHook({ init() {} }).enable();" },
      { file: "d.ts", text: "const storage = new AsyncLocalStorage();" },
      { file: "e.ts", text: "// not an AsyncLocalStorage: the request id is handed down\nconst id = record.id;" },
    ];
    assert.deepEqual(offenders(fake), ["a.ts", "b.ts", "c.ts", "d.ts"]);
  });
});
