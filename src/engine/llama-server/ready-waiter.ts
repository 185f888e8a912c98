import type { RuntimeError } from "../../shared/runtime-error.js";
import type { LaunchedServer } from "./launch.js";

/** The callers waiting for the next ready server: settled once, by a launch or by giving up. */
export interface ReadyWaiter {
  promise: Promise<LaunchedServer>;
  resolve: (server: LaunchedServer) => void;
  reject: (error: RuntimeError) => void;
}

export function newReadyWaiter(): ReadyWaiter {
  let resolve!: (server: LaunchedServer) => void;
  let reject!: (error: RuntimeError) => void;
  const promise = new Promise<LaunchedServer>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined); // nobody may be waiting when the loop gives up
  return { promise, resolve, reject };
}
