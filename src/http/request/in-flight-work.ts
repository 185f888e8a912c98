/**
 * Chat turns and text completions this server is running, for /health's `in_flight`. A request
 * counts from the moment its work starts until that work has stopped (its turn settled, its
 * generation ended), not until its response ended: a client that went away stays counted until
 * its cancelled turn has really let go, so a turn that leaked would show here.
 */
export class InFlightWork {
  private count = 0;

  /** Counts one piece of work; the returned release is idempotent. */
  enter(): () => void {
    this.count += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.count -= 1;
    };
  }

  get size(): number {
    return this.count;
  }
}
