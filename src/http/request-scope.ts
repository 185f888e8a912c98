import { AsyncLocalStorage } from "node:async_hooks";
import type { Logger } from "pino";
import type { RequestRecord } from "./request-record.js";

/**
 * The request a piece of work belongs to, found from anywhere in its async flow (the resolver,
 * the turn's events, a log line) without threading it through every call. One per HTTP app.
 */
export class RequestScope {
  private readonly storage = new AsyncLocalStorage<RequestRecord>();

  run<T>(record: RequestRecord, work: () => T): T {
    return this.storage.run(record, work);
  }

  current(): RequestRecord | undefined {
    return this.storage.getStore();
  }

  /** A logger whose every line, written during a request, carries that request's `request_id`. */
  scopedLogger(logger: Logger): Logger {
    return logger.child({}, {
      formatters: {
        log: (fields: object) => {
          const record = this.current();
          return record === undefined ? fields : { request_id: record.id, ...fields };
        },
      },
    });
  }
}
