/** A glob as config keys use it (tool names, model aliases): `*` any run of characters, `?` one character, everything else literal. */
export function globToRegExp(glob: string): RegExp {
  let source = "";
  for (const char of glob) {
    if (char === "*") source += ".*";
    else if (char === "?") source += ".";
    else source += char.replace(/[\\^$.|+()[\]{}]/g, "\\$&");
  }
  return new RegExp(`^${source}$`, "s");
}

/** True when the pattern has a wildcard (else it names one thing exactly). */
export function isGlob(pattern: string): boolean {
  return pattern.includes("*") || pattern.includes("?");
}
