const UNITS: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 };

/**
 * Bytes from a config size: a number of bytes, or a string with a unit ("12GiB", "512 MiB",
 * "1.5GB"); null when it is neither (the config schema reports that).
 */
export function parseByteSize(value: number | string): number | null {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? value : null;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b|b)?\s*$/i.exec(value);
  if (match === null) return null;
  const factor = UNITS[(match[2] ?? "b").toLowerCase()];
  if (factor === undefined) return null;
  return Math.floor(Number(match[1]) * factor);
}
