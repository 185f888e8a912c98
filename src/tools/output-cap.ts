/** Default cap on the text a tool call hands to the model: a runaway tool must not fill the context. */
export const DEFAULT_MAX_OUTPUT_BYTES = 16 * 1024;

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes (never inside a character) and says how much was
 * dropped: `…[truncated N bytes]`, so the model knows the output is partial.
 */
export function capOutput(text: string, maxBytes: number = DEFAULT_MAX_OUTPUT_BYTES): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;
  let end = Math.max(0, maxBytes);
  // Step back over UTF-8 continuation bytes (10xxxxxx) to a character boundary.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString("utf8")}…[truncated ${bytes.length - end} bytes]`;
}
