/**
 * The lines worth quoting in an error: llama.cpp marks errors with " E " (timestamped format)
 * or "error"; fall back to the last lines when none are marked.
 */
export function errorExcerpt(lines: readonly string[], count = 6): string[] {
  const marked = lines.filter((line) => / E |error|failed|fatal|abort/i.test(line));
  return (marked.length > 0 ? marked : lines).slice(-count);
}
