import { isPair, isScalar, isSeq, parse as parseYamlValue, visit, type Document, type LineCounter, type Scalar } from "yaml";
import type { ConfigProblem } from "./config-problem.js";

const REFERENCE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const WHOLE_REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/;

/**
 * Replaces `${NAME}` (and `${NAME:-fallback}`) in string values of the parsed document, so a
 * value can never change the YAML structure. `$$` is a literal `$`. A plain scalar that is a
 * single reference is re-read as a YAML scalar, so `port: ${PORT}` yields a number.
 */
export function substituteEnv(
  doc: Document,
  env: Readonly<Record<string, string | undefined>>,
  lineCounter: LineCounter,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  visit(doc, {
    Scalar(_key, node: Scalar, ancestors) {
      if (typeof node.value !== "string" || !node.value.includes("$")) return;
      const original = node.value;
      const missing: string[] = [];
      const replaced = original.replace(REFERENCE, (match, name: string | undefined, fallback: string | undefined) => {
        if (match === "$$") return "$";
        const value = env[name as string];
        if (value !== undefined && value !== "") return value;
        if (fallback !== undefined) return fallback;
        missing.push(name as string);
        return match;
      });
      if (missing.length > 0) {
        const line = node.range ? lineCounter.linePos(node.range[0]).line : undefined;
        for (const name of missing) {
          problems.push({
            path: keyPath([...ancestors, node]),
            message: `environment variable ${name} is not set (referenced as \${${name}}; use \${${name}:-default} for a fallback)`,
            ...(line === undefined ? {} : { line }),
          });
        }
        return;
      }
      node.value = isScalar(node) && node.type === "PLAIN" && WHOLE_REFERENCE.test(original) ? reread(replaced) : replaced;
    },
  });
  return problems;
}

function reread(text: string): unknown {
  try {
    const value: unknown = parseYamlValue(text);
    return value === null || ["number", "boolean"].includes(typeof value) ? value : text;
  } catch {
    return text;
  }
}

/** Dotted key path of a node from its ancestor chain (pairs give keys, sequences give indexes). */
function keyPath(chain: readonly unknown[]): string {
  const parts: string[] = [];
  chain.forEach((node, index) => {
    if (isPair(node) && isScalar(node.key)) parts.push(String(node.key.value));
    else if (isSeq(node)) parts.push(String(node.items.indexOf(chain[index + 1])));
  });
  return parts.join(".");
}
