import type { Checkpoint } from "../store/store-types.js";

/**
 * Serialises checkpoint writes in call order, so a write that was started without waiting (the
 * turn's first checkpoint, written while the model already generates) can never land after a
 * later one. `flush` waits for all of them and reports the first failure.
 */
export class CheckpointWriter {
  private chain: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | null = null;

  constructor(private readonly write: (checkpoint: Checkpoint) => Promise<void>) {}

  save(checkpoint: Checkpoint): Promise<void> {
    const next = this.chain.then(() => this.write(checkpoint));
    this.chain = next.catch((error: unknown) => {
      this.failure ??= { error };
    });
    return next;
  }

  async flush(): Promise<void> {
    await this.chain;
    if (this.failure) throw this.failure.error;
  }
}
