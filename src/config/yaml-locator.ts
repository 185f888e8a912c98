import { isMap, isScalar, isSeq, type Document, type LineCounter, type Node } from "yaml";

/**
 * Finds the 1-based line of a key path in a parsed YAML document. When the full path does not
 * exist (a missing key), the line of the nearest existing parent is returned.
 */
export function lineOfPath(
  doc: Document,
  path: readonly PropertyKey[],
  lineCounter: LineCounter,
): number | undefined {
  let node: unknown = doc.contents;
  let line = lineAt(node, lineCounter);
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(segment));
      if (pair === undefined) break;
      line = lineAt(pair.key, lineCounter) ?? line;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === "number") {
      const item: unknown = node.items[segment];
      if (item === undefined) break;
      line = lineAt(item, lineCounter) ?? line;
      node = item;
    } else {
      break;
    }
  }
  return line;
}

function lineAt(node: unknown, lineCounter: LineCounter): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? lineCounter.linePos(range[0]).line : undefined;
}
