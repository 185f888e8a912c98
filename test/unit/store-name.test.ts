// storeName: the one mapping from ids to file names, checked as properties over generated ids
// (safe ids with upper case, dots and Windows device names, and arbitrary strings for model names).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isSafeId } from "../../src/shared/safe-id.js";
import { caseInsensitiveKey, idFromFolderName, idFromStoreName, isDeviceName, storeName } from "../../src/shared/store-name.js";
import { fuzzParams } from "../helpers/fuzz-runs.js";

const SAFE_CHARS = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"];
const DEVICES = ["con", "prn", "aux", "nul", "com0", "com1", "com9", "lpt1", "lpt9"];

/** Randomly upper- or lower-cases each letter. */
const anyCase = (text: string): fc.Arbitrary<string> =>
  fc.array(fc.boolean(), { minLength: text.length, maxLength: text.length }).map((flags) => [...text].map((char, i) => (flags[i] ? char.toUpperCase() : char)).join(""));

const plainSafeId = fc.string({ unit: fc.constantFrom(...SAFE_CHARS), minLength: 1, maxLength: 64 }).filter(isSafeId);
/** Device names in any case, with or without extensions and trailing dots. */
const deviceId = fc
  .tuple(fc.constantFrom(...DEVICES), fc.constantFrom("", ".txt", ".", "..", ".tar.gz", ".a."))
  .chain(([device, tail]) => anyCase(device + tail))
  .filter(isSafeId);
const safeId = fc.oneof(plainSafeId, deviceId, plainSafeId.map((id) => `${id.slice(0, 62)}.`).filter(isSafeId));
/** Model names are config keys: anything, including spaces, slashes and non-ASCII. */
const anyName = fc.oneof(safeId, fc.string({ minLength: 1, maxLength: 80 }), fc.string({ unit: "grapheme", minLength: 1, maxLength: 20 }));

/** Another id that differs from `id` only by case or by trailing dots or spaces. */
const lookalike = (id: string): fc.Arbitrary<string> =>
  fc.oneof(anyCase(id), fc.constantFrom(`${id}.`, `${id}..`, `${id} `, `${id}. `, id.replace(/[. ]+$/, "")));

function assertLegalOnWindows(name: string): void {
  assert.ok(name.length > 0 && name.length <= 130, `length of ${name}`);
  assert.ok(![...name].some((char) => '<>:"/\\|?*'.includes(char) || char.charCodeAt(0) < 32), `forbidden character in ${name}`);
  assert.doesNotMatch(name, /[. ]$/, `trailing dot or space in ${name}`);
  assert.ok(!name.startsWith("."), `hidden or relative name ${name}`);
  assert.ok(!isDeviceName(name.split(".")[0] ?? ""), `device name ${name}`);
  assert.match(name, /^[a-z0-9_.+-]+$/, `only lower case and a few marks in ${name}`);
}

describe("storeName", () => {
  it("keeps an all-lower-case plain id as it is (folders of earlier versions keep their names)", () => {
    for (const id of ["default_user", "s1", "session-2.a", "a.b.c", "x".repeat(64), "console", "com10", "nul_1", "auxiliary.txt"]) assert.equal(storeName(id), id);
  });

  it("encodes upper case, device names and trailing dots, reversibly", () => {
    const cases: Array<[string, string]> = [
      ["Alice", "+alice"],
      ["S1", "+s1"],
      ["abc.", "abc.+"],
      ["abc..", "abc..+"],
      ["con", "con+"],
      ["CON", "+c+o+n"],
      ["nul.txt", "nul+.txt"],
      ["com1.tar.gz", "com1+.tar.gz"],
      ["lpt9.", "lpt9+.+"],
      ["A.", "+a.+"],
    ];
    for (const [id, name] of cases) {
      assert.equal(storeName(id), name, id);
      assert.equal(idFromStoreName(name), id, name);
    }
  });

  it("hashes a name that is not a safe id (model names) into `+_` and 16 hex digits", () => {
    assert.match(storeName("Qwen 2.5 / 7B"), /^\+_[0-9a-f]{16}$/);
    assert.notEqual(storeName("a b"), storeName("A b"));
    assert.equal(idFromStoreName(storeName("a b")), null);
  });

  it("property: two distinct ids never map to names that are equal case-insensitively or up to trailing dots and spaces", () => {
    fc.assert(
      fc.property(anyName, anyName, (a, b) => {
        if (a === b) return;
        assert.notEqual(caseInsensitiveKey(storeName(a)), caseInsensitiveKey(storeName(b)), `${JSON.stringify(a)} and ${JSON.stringify(b)}`);
      }),
      fuzzParams(2000),
    );
  });

  it("property: ids that differ only by case or by a trailing dot or space never share a name", () => {
    fc.assert(
      fc.property(
        anyName.chain((id) => fc.tuple(fc.constant(id), lookalike(id))),
        ([a, b]) => {
          if (a === b) return;
          assert.notEqual(caseInsensitiveKey(storeName(a)), caseInsensitiveKey(storeName(b)), `${JSON.stringify(a)} and ${JSON.stringify(b)}`);
        },
      ),
      fuzzParams(2000),
    );
  });

  it("property: every name produced is legal on Windows (no device name, no trailing dot or space, no forbidden character, bounded)", () => {
    fc.assert(
      fc.property(anyName, (id) => assertLegalOnWindows(storeName(id))),
      fuzzParams(2000),
    );
  });

  it("property: the exact id comes back from the name of a safe id; any other name gives null or its one id", () => {
    fc.assert(
      fc.property(safeId, (id) => assert.equal(idFromStoreName(storeName(id)), id)),
      fuzzParams(2000),
    );
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...SAFE_CHARS, "+"), minLength: 1, maxLength: 20 }), (name) => {
        const id = idFromStoreName(name);
        if (id !== null) assert.equal(storeName(id), name);
      }),
      fuzzParams(2000),
    );
  });

  it("idFromFolderName reads both a storeName and a folder an earlier version named by the raw id", () => {
    assert.equal(idFromFolderName("+alice"), "Alice");
    assert.equal(idFromFolderName("Alice"), "Alice");
    assert.equal(idFromFolderName("alice"), "alice");
    assert.equal(idFromFolderName(".hidden"), null);
    assert.equal(idFromFolderName("+x+"), null);
  });
});
