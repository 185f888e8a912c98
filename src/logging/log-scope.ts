import { AsyncLocalStorage } from "node:async_hooks";
import type { Logger } from "pino";

/**
 * Fields that every line logged during one piece of work carries, found through its async flow
 * rather than threaded through every call: the stdio servers run each call inside `run` with its
 * protocol id, so the lines of shared components (the runtime's pull, plan, doctor, a model load a
 * call caused) carry the `req_id` of the call they served. One per server.
 */
export class LogScope {
  private readonly storage = new AsyncLocalStorage<Readonly<Record<string, unknown>>>();

  run<T>(fields: Readonly<Record<string, unknown>>, work: () => T): T {
    return this.storage.run(fields, work);
  }

  /** A logger whose lines written inside `run` carry its fields (a line's own fields win). */
  scopedLogger(logger: Logger): Logger {
    return logger.child(
      {},
      {
        formatters: {
          log: (fields: object) => {
            const scope = this.storage.getStore();
            return scope === undefined ? fields : { ...scope, ...fields };
          },
        },
      },
    );
  }
}
