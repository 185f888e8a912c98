import type { AgentEvent } from "../agent/events.js";
import { formatMs } from "./tool-line.js";

/** Token counts summed over model steps (a turn's, or a whole chat's). */
export class UsageTally {
  input = 0;
  output = 0;
  cached = 0;
  steps = 0;
  /** Time the model spent on its steps (llm_start to llm_done), for a tokens-per-second figure. */
  modelMs = 0;
  turns = 0;
  private stepStarted: number | null = null;

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts the events that carry usage or time a model step; ignores the others. */
  observe(event: AgentEvent): void {
    if (event.event === "llm_start") this.stepStarted = this.now();
    else if (event.event === "llm_done" && this.stepStarted !== null) {
      this.modelMs += this.now() - this.stepStarted;
      this.stepStarted = null;
      this.steps++;
    } else if (event.event === "usage") {
      this.input += event.input_tokens;
      this.output += event.output_tokens;
      this.cached += event.cached_input_tokens ?? 0;
    }
  }

  add(other: UsageTally): void {
    this.input += other.input;
    this.output += other.output;
    this.cached += other.cached;
    this.steps += other.steps;
    this.modelMs += other.modelMs;
    this.turns += Math.max(1, other.turns);
  }

  /** `in 120 (100 cached) · out 45 · 2 steps · 1.2s · 37.5 tok/s` */
  describe(): string {
    const parts = [`in ${this.input}${this.cached > 0 ? ` (${this.cached} cached)` : ""}`, `out ${this.output}`, `${this.steps} step${this.steps === 1 ? "" : "s"}`];
    if (this.turns > 1) parts.unshift(`${this.turns} turns`);
    if (this.modelMs > 0) {
      parts.push(formatMs(this.modelMs));
      if (this.output > 0) parts.push(`${((this.output * 1000) / this.modelMs).toFixed(1)} tok/s`);
    }
    return parts.join(" · ");
  }
}
