import type { LoadProgress } from "../engine/engine.js";
import type { LineWriter } from "./line-writer.js";
import type { TerminalStyle } from "./terminal-style.js";
import { formatMs } from "./tool-line.js";

const BAR_WIDTH = 24;
/** A model already loaded answers at once: no bar flashes for it. */
const SHOW_AFTER_MS = 150;
/** Redraws at most this often: a load reports progress hundreds of times. */
const REDRAW_MS = 80;

const PHASE_TEXT: Record<LoadProgress["phase"], string> = {
  loading: "loading",
  downloading: "downloading",
  starting: "starting llama-server for",
  checking: "checking the endpoint of",
};

/**
 * The line shown while a model loads, before the first answer: a bar with the percentage where
 * the engine reports one (node-llama-cpp's load progress), the phase in words where it does not
 * (a llama-server child starting, an OpenAI endpoint being checked). Redrawn in place on a
 * terminal; elsewhere nothing is drawn (a script's stderr is no place for a bar).
 */
export class LoadProgressBar {
  private phase: LoadProgress["phase"] = "loading";
  private fraction: number | undefined;
  private drawnAt = Number.NEGATIVE_INFINITY;
  private drawn = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly started: number;

  constructor(
    private readonly out: LineWriter,
    private readonly style: TerminalStyle,
    private readonly model: string,
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
  }

  get enabled(): boolean {
    return this.out.isTTY;
  }

  start(): void {
    if (!this.enabled) return;
    this.out.endLine();
    this.timer = setTimeout(() => this.draw(true), SHOW_AFTER_MS);
  }

  update(progress: LoadProgress): void {
    this.phase = progress.phase;
    if (progress.progress !== undefined) this.fraction = Math.min(1, Math.max(0, progress.progress));
    this.draw(false);
  }

  /** Replaces the bar with one line saying how it ended (nothing when there was no bar). */
  finish(outcome: "ready" | "failed" | "cancelled"): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (!this.drawn) return;
    this.clear();
    if (outcome === "ready") this.out.line(this.style.dim(`${this.model} ready in ${formatMs(this.now() - this.started)}`));
  }

  private draw(force: boolean): void {
    if (!this.enabled) return;
    const at = this.now();
    if (!force && at - this.drawnAt < REDRAW_MS) return;
    this.drawnAt = at;
    const label = `${PHASE_TEXT[this.phase]} ${this.model}`;
    let text = label;
    if (this.fraction !== undefined) {
      const filled = Math.round(this.fraction * BAR_WIDTH);
      text = `${label} [${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}] ${Math.round(this.fraction * 100)}%`;
    } else {
      text = `${label}...`;
    }
    this.clear();
    this.out.write(this.style.dim(text), text);
    this.drawn = true;
  }

  /** Back to the start of the line, which is erased (the bar never wraps: it is short). */
  private clear(): void {
    if (this.drawn) this.out.eraseLine();
  }
}
