const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"] as const;

/** 1536 -> "1.5 KiB"; for findings a person reads. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${UNITS[unit]}`;
}
