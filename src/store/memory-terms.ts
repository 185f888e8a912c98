/**
 * How memory text becomes search terms (used identically for documents and queries). Kept apart
 * from the index so the rules can be read and tested on their own.
 */

/** Same split as minisearch's default: whitespace, separators and punctuation. */
const SPACE_OR_PUNCTUATION = /[\n\r\p{Z}\p{P}\p{S}]+/u;

/** Scripts written without spaces: a run of them is indexed as overlapping character pairs. */
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;

/** Common English words that would otherwise match almost every turn ("what is the ..."). */
const STOP_WORDS = new Set(
  (
    "a an and are as at be but by can could did do does for from had has have he her his how i if in into is it its " +
    "me my no not of on or our she so than that the their them then there these they this to was we were what when " +
    "where which who why will with would you your"
  ).split(" "),
);

export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const token of text.split(SPACE_OR_PUNCTUATION)) {
    if (token === "") continue;
    const runs = token.match(CJK_RUN);
    if (runs === null) {
      tokens.push(token);
      continue;
    }
    // Latin parts of a mixed token stay whole; each CJK run becomes bigrams (a lone character stays).
    for (const rest of token.split(CJK_RUN)) if (rest !== "") tokens.push(rest);
    for (const run of runs) {
      const chars = Array.from(run);
      if (chars.length === 1) tokens.push(run);
      for (let i = 0; i + 1 < chars.length; i += 1) tokens.push(`${chars[i] ?? ""}${chars[i + 1] ?? ""}`);
    }
  }
  return tokens;
}

export function processTerm(term: string): string | null {
  const lower = term.toLowerCase();
  return STOP_WORDS.has(lower) ? null : lower;
}

const HAS_CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/**
 * Prefix matching only for terms long enough to be meaningful ("ca" would match everything), and
 * for CJK, where one character is a word and must match the pairs it was indexed in.
 */
export function usePrefix(term: string): boolean {
  return term.length >= 3 || HAS_CJK.test(term);
}

/** Typos tolerated only in longer words, where an edit distance of ~20% is still specific. */
export function fuzziness(term: string): number | false {
  return term.length >= 5 ? 0.2 : false;
}

/** Cuts to at most `max` characters, ending with "…" when cut, never splitting a surrogate pair. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 1) return max === 1 ? "…" : "";
  let cut = text.slice(0, max - 1);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return `${cut.trimEnd()}…`;
}
