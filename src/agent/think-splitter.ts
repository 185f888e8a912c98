/**
 * Separates inline reasoning (`<think>…</think>`, as many open models emit it when the engine does
 * not parse it out) from answer text, across chunk boundaries: a tag split over two deltas is
 * held back until it is known to be a tag or not.
 */
export class ThinkSplitter {
  private inThink = false;
  private pending = "";

  constructor(
    private readonly open = "<think>",
    private readonly close = "</think>",
  ) {}

  /** Returns the parts of this delta: answer text and reasoning text (either may be empty). */
  push(delta: string): { text: string; thinking: string } {
    let input = this.pending + delta;
    this.pending = "";
    let text = "";
    let thinking = "";
    while (input !== "") {
      const tag = this.inThink ? this.close : this.open;
      const at = input.indexOf(tag);
      if (at !== -1) {
        if (this.inThink) thinking += input.slice(0, at);
        else text += input.slice(0, at);
        input = input.slice(at + tag.length);
        this.inThink = !this.inThink;
        continue;
      }
      // Hold back a suffix that could be the start of the tag.
      const keep = partialTagSuffix(input, tag);
      const emit = input.slice(0, input.length - keep);
      if (this.inThink) thinking += emit;
      else text += emit;
      this.pending = input.slice(input.length - keep);
      break;
    }
    return { text, thinking };
  }

  /** At the end of the stream whatever was held back is what it looked like. */
  flush(): { text: string; thinking: string } {
    const rest = this.pending;
    this.pending = "";
    return this.inThink ? { text: "", thinking: rest } : { text: rest, thinking: "" };
  }
}

function partialTagSuffix(input: string, tag: string): number {
  for (let length = Math.min(tag.length - 1, input.length); length > 0; length--) {
    if (input.endsWith(tag.slice(0, length))) return length;
  }
  return 0;
}
