/**
 * Reads the config schema itself to tell a user what a key accepts and which keys exist, so a
 * problem says `must be "auto" or an integer >= 0` and `did you mean "ctx_size"?` instead of
 * zod's "Invalid input". Walks zod 4's public `_zod.def` descriptions; anything it does not know
 * yields undefined and the caller keeps zod's own message.
 */

interface Def {
  type: string;
  innerType?: Node;
  in?: Node;
  shape?: Record<string, Node>;
  valueType?: Node;
  element?: Node;
  options?: Node[];
  values?: unknown[];
  entries?: Record<string, unknown>;
  checks?: Array<{ _zod: { def: { check: string; value?: unknown; inclusive?: boolean; format?: string } } }>;
  format?: string;
}

interface Node {
  _zod: { def: Def };
}

const WRAPPERS = new Set(["optional", "default", "prefault", "nullable", "catch", "readonly", "nonoptional"]);

function unwrap(node: Node): Node {
  let current = node;
  for (let i = 0; i < 20; i++) {
    const def = current._zod.def;
    if (WRAPPERS.has(def.type) && def.innerType) current = def.innerType;
    else if (def.type === "pipe" && def.in) current = def.in;
    else break;
  }
  return current;
}

/** The schema node at a config path (`llama.models.<name>.ctx_size`), or undefined. */
export function schemaAt(root: unknown, segments: readonly PropertyKey[]): Node | undefined {
  let node = unwrap(root as Node);
  for (const [index, segment] of segments.entries()) {
    const def = node._zod.def;
    if (def.type === "object" && def.shape) {
      const next = def.shape[String(segment)];
      if (next === undefined) return undefined;
      node = unwrap(next);
    } else if (def.type === "record" && def.valueType) node = unwrap(def.valueType);
    else if (def.type === "array" && def.element) node = unwrap(def.element);
    else if (def.type === "union") {
      // The first option the rest of the path exists in (`true | [names]` at `.0`: the list's element).
      const rest = segments.slice(index);
      for (const option of def.options ?? []) {
        const found = schemaAt(option, rest);
        if (found !== undefined) return found;
      }
      return undefined;
    } else return undefined;
  }
  return node;
}

/** The value at a path of parsed input (a config document, a method's params), or undefined. */
export function valueAt(root: unknown, segments: readonly PropertyKey[]): unknown {
  let value = root;
  for (const segment of segments) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

/** The keys an object at this path accepts (empty when it is not an object). */
export function keysAt(root: unknown, segments: readonly PropertyKey[]): string[] {
  const node = schemaAt(root, segments);
  if (node?._zod.def.type === "union") {
    // Objects of either shape (an mcp.servers entry: stdio or remote): every key either takes.
    const keys = (node._zod.def.options ?? []).map(unwrap).flatMap((option) => (option._zod.def.type === "object" ? Object.keys(option._zod.def.shape ?? {}) : []));
    return [...new Set(keys)];
  }
  return node?._zod.def.type === "object" ? Object.keys(node._zod.def.shape ?? {}) : [];
}

/** "\"auto\" or an integer >= 0", or undefined when the node is not simple enough to describe. */
export function describeAccepted(node: Node | undefined): string | undefined {
  if (node === undefined) return undefined;
  const def = unwrap(node)._zod.def;
  switch (def.type) {
    case "literal":
      return (def.values ?? []).map((value) => JSON.stringify(value)).join(" or ");
    case "enum":
      return `one of ${Object.values(def.entries ?? {}).map((value) => JSON.stringify(value)).join(", ")}`;
    case "boolean":
      return "true or false";
    case "string":
      return "a string";
    case "number":
      return describeNumber(def);
    case "array":
      return "a list";
    case "object": {
      const keys = Object.keys(def.shape ?? {});
      return keys.length === 0 ? "a mapping" : `a mapping with keys among ${keys.join(", ")}`;
    }
    case "record":
      return "a mapping of names to settings";
    case "union": {
      const parts = (def.options ?? []).map((option) => describeAccepted(option));
      return parts.every((part) => part !== undefined) ? parts.join(" or ") : undefined;
    }
    default:
      return undefined;
  }
}

function describeNumber(def: Def): string {
  let integer = def.format === "safeint";
  const bounds: string[] = [];
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check === "number_format" && c.format === "safeint") integer = true;
    if (c.check === "greater_than") bounds.push(`${c.inclusive === false ? ">" : ">="} ${String(c.value)}`);
    if (c.check === "less_than") bounds.push(`${c.inclusive === false ? "<" : "<="} ${String(c.value)}`);
  }
  return `${integer ? "an integer" : "a number"}${bounds.length > 0 ? ` ${bounds.join(" and ")}` : ""}`;
}
