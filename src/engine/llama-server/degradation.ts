// Degradation tiers: when the server repeatedly fails to start as configured (typically out of
// memory: a too large context, or VRAM), give up something and try again rather than stay down.
// The tier is sticky for the engine's lifetime and reported by health() and doctor, so the user
// sees what was given up and can fix the config.

export const DEGRADATION_TIERS = ["NORMAL", "REDUCED_CONTEXT", "CPU_ONLY"] as const;
export type DegradationTier = (typeof DEGRADATION_TIERS)[number];

/** The launch settings a tier may change. */
export interface LaunchShape {
  ctxSize: number;
  gpuLayers: number;
}

/** Halving stops here: below it a chat with a system prompt and tools no longer fits. */
export const MIN_REDUCED_CTX = 512;

/** Consecutive start failures on one tier before the next tier is tried. */
export const START_FAILURES_PER_TIER = 2;

export function shapeForTier(tier: DegradationTier, base: LaunchShape): LaunchShape {
  const halved = Math.max(Math.min(MIN_REDUCED_CTX, base.ctxSize), Math.floor(base.ctxSize / 2));
  switch (tier) {
    case "NORMAL":
      return { ...base };
    case "REDUCED_CONTEXT":
      return { ctxSize: halved, gpuLayers: base.gpuLayers };
    case "CPU_ONLY":
      return { ctxSize: halved, gpuLayers: 0 };
  }
}

/** The next tier that actually changes something (CPU_ONLY is pointless when already on CPU), or null. */
export function nextTier(current: DegradationTier, base: LaunchShape): DegradationTier | null {
  const now = shapeForTier(current, base);
  for (const tier of DEGRADATION_TIERS.slice(DEGRADATION_TIERS.indexOf(current) + 1)) {
    const shape = shapeForTier(tier, base);
    if (shape.ctxSize !== now.ctxSize || shape.gpuLayers !== now.gpuLayers) return tier;
  }
  return null;
}

/** Counts start failures and steps down a tier after START_FAILURES_PER_TIER in a row. */
export class DegradationLadder {
  private current: DegradationTier = "NORMAL";
  private failuresOnTier = 0;

  constructor(private readonly base: LaunchShape) {}

  get tier(): DegradationTier {
    return this.current;
  }

  get shape(): LaunchShape {
    return shapeForTier(this.current, this.base);
  }

  /** Returns the new tier when this failure made it step down. */
  recordStartFailure(): DegradationTier | null {
    this.failuresOnTier += 1;
    if (this.failuresOnTier < START_FAILURES_PER_TIER) return null;
    const next = nextTier(this.current, this.base);
    if (next === null) return null;
    this.current = next;
    this.failuresOnTier = 0;
    return next;
  }

  recordStarted(): void {
    this.failuresOnTier = 0;
  }
}
