/**
 * The fields of an MCP form (`requested_schema`: a flat object of primitive properties) as the
 * terminal chat asks them: one question each, its answer checked and converted to the field's type.
 */

export type FieldValue = string | number | boolean | string[];

export interface FormField {
  name: string;
  label: string;
  required: boolean;
  kind: "string" | "number" | "integer" | "boolean" | "choice" | "choices";
  /** The allowed values of a choice (`enum`, or `oneOf`/`anyOf` consts). */
  options: string[];
  default?: FieldValue;
}

function optionsOf(schema: Record<string, unknown>): string[] {
  if (Array.isArray(schema.enum)) return schema.enum.map(String);
  const listed = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : [];
  return listed.map((entry) => (typeof entry === "object" && entry !== null && "const" in entry ? String((entry as { const: unknown }).const) : "")).filter((value) => value !== "");
}

export function formFields(schema: Record<string, unknown>): FormField[] {
  const properties = typeof schema.properties === "object" && schema.properties !== null ? (schema.properties as Record<string, Record<string, unknown>>) : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  return Object.entries(properties).map(([name, property]) => {
    const options = property.type === "array" && typeof property.items === "object" && property.items !== null ? optionsOf(property.items as Record<string, unknown>) : optionsOf(property);
    const kind: FormField["kind"] = property.type === "array" ? "choices" : options.length > 0 ? "choice" : property.type === "number" || property.type === "integer" || property.type === "boolean" ? property.type : "string";
    const fallback = property.default;
    const isValue = typeof fallback === "string" || typeof fallback === "number" || typeof fallback === "boolean" || (Array.isArray(fallback) && fallback.every((item) => typeof item === "string"));
    return { name, label: typeof property.title === "string" ? property.title : name, required: required.has(name), kind, options, ...(isValue ? { default: fallback } : {}) };
  });
}

/** The question for a field: `Label [hint] (optional, default x): `. */
export function fieldQuestion(field: FormField): string {
  const hint = { string: "", number: "number", integer: "whole number", boolean: "y/n", choice: `one of ${field.options.join(", ")}`, choices: `any of ${field.options.join(", ")}, comma-separated` }[field.kind];
  const notes = [...(field.required ? [] : ["optional"]), ...(field.default === undefined ? [] : [`default ${Array.isArray(field.default) ? field.default.join(", ") : String(field.default)}`])];
  return `${field.label}${hint === "" ? "" : ` [${hint}]`}${notes.length === 0 ? "" : ` (${notes.join(", ")})`}: `;
}

/** An answer as the field's value; `empty` for a blank line; `problem` to ask again. */
export function parseField(field: FormField, text: string): { value: FieldValue } | { empty: true } | { problem: string } {
  const answer = text.trim();
  if (answer === "") return { empty: true };
  switch (field.kind) {
    case "string":
      return { value: answer };
    case "number":
    case "integer": {
      const value = Number(answer);
      if (!Number.isFinite(value) || (field.kind === "integer" && !Number.isInteger(value))) return { problem: `not a ${field.kind === "integer" ? "whole number" : "number"}` };
      return { value };
    }
    case "boolean": {
      const word = answer.toLowerCase();
      if (["y", "yes", "true"].includes(word)) return { value: true };
      if (["n", "no", "false"].includes(word)) return { value: false };
      return { problem: "answer y or n" };
    }
    case "choice":
      return field.options.includes(answer) ? { value: answer } : { problem: `one of ${field.options.join(", ")}` };
    case "choices": {
      const picked = answer.split(",").map((item) => item.trim()).filter((item) => item !== "");
      const unknown = picked.filter((item) => !field.options.includes(item));
      return unknown.length === 0 ? { value: picked } : { problem: `not offered: ${unknown.join(", ")}` };
    }
    default: {
      const unreachable: never = field.kind;
      return unreachable;
    }
  }
}
