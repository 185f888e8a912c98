import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fieldQuestion, formFields, parseField } from "../../src/terminal/elicitation-fields.js";

const SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", title: "Your name" },
    age: { type: "integer" },
    ok: { type: "boolean", default: true },
    color: { type: "string", enum: ["red", "blue"] },
    size: { type: "string", oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }] },
    tags: { type: "array", items: { type: "string", enum: ["a", "b", "c"] } },
  },
  required: ["name", "color"],
};

describe("terminal elicitation fields", () => {
  it("reads an MCP form schema as fields with their questions", () => {
    const fields = formFields(SCHEMA);
    assert.deepEqual(fields.map((f) => [f.name, f.kind, f.required, f.options]), [
      ["name", "string", true, []],
      ["age", "integer", false, []],
      ["ok", "boolean", false, []],
      ["color", "choice", true, ["red", "blue"]],
      ["size", "choice", false, ["s", "l"]],
      ["tags", "choices", false, ["a", "b", "c"]],
    ]);
    assert.deepEqual(fields.map(fieldQuestion), [
      "Your name: ",
      "age [whole number] (optional): ",
      "ok [y/n] (optional, default true): ",
      "color [one of red, blue]: ",
      "size [one of s, l] (optional): ",
      "tags [any of a, b, c, comma-separated] (optional): ",
    ]);
  });

  it("converts answers to the field's type and says what is wrong otherwise", () => {
    const [name, age, ok, color, , tags] = formFields(SCHEMA);
    assert.ok(name && age && ok && color && tags);
    assert.deepEqual(parseField(name, "  Ann "), { value: "Ann" });
    assert.deepEqual(parseField(name, "  "), { empty: true });
    assert.deepEqual(parseField(age, "7"), { value: 7 });
    assert.deepEqual(parseField(age, "7.5"), { problem: "not a whole number" });
    assert.deepEqual(parseField(ok, "N"), { value: false });
    assert.deepEqual(parseField(ok, "maybe"), { problem: "answer y or n" });
    assert.deepEqual(parseField(color, "green"), { problem: "one of red, blue" });
    assert.deepEqual(parseField(tags, "a, c"), { value: ["a", "c"] });
    assert.deepEqual(parseField(tags, "a, z"), { problem: "not offered: z" });
  });
});
