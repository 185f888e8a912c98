import type { Context } from "hono";
import type { TurnRunner, TurnRunOptions } from "./http-deps.js";
import { requestRecord } from "./request-record.js";

/**
 * The runner a route runs its request's turn on: the turn's events also reach the request's
 * record (tokens, first token for the metrics and access log) and its log lines carry the request
 * id (the record's logger). The routes never see the difference.
 */
export function scopedRunner(c: Context, runner: TurnRunner): TurnRunner {
  const record = requestRecord(c);
  if (record === undefined) return runner;
  const tapped = (options: TurnRunOptions): TurnRunOptions => ({
    ...options,
    logger: record.logger,
    emit: (event) => {
      record.observe(event);
      options.emit(event);
    },
  });
  return {
    runTurn: (request, options) => runner.runTurn(request, tapped(options)),
    runStateless: (request, options) => runner.runStateless(request, tapped(options)),
    ...(runner.countPromptTokens ? { countPromptTokens: runner.countPromptTokens.bind(runner) } : {}),
  };
}
