import type { Context } from "hono";
import type { TurnOutcome } from "../../agent/turn-outcome.js";
import type { TurnRunner, TurnRunOptions } from "../http-deps.js";
import { requestRecord } from "../request/request-record.js";

/**
 * The runner a route runs its request's turn on: the turn's events (first token) and its
 * outcome's usage reach the request's record for the metrics and access log (the request's
 * series count them, so the runner does not: `meter: false`), and its log lines carry the
 * request id (the record's logger). The routes never see the difference.
 */
export function scopedRunner(c: Context, runner: TurnRunner): TurnRunner {
  const record = requestRecord(c);
  if (record === undefined) return runner;
  const tapped = (options: TurnRunOptions): TurnRunOptions => ({
    ...options,
    logger: record.logger,
    meter: false,
    emit: (event) => {
      record.observe(event);
      options.emit(event);
    },
  });
  const counted = <T extends TurnOutcome>(outcome: T): T => {
    record.turnEnded(outcome.usage);
    return outcome;
  };
  return {
    runTurn: async (request, options) => counted(await runner.runTurn(request, tapped(options))),
    runStateless: async (request, options) => counted(await runner.runStateless(request, tapped(options))),
    ...(runner.countPromptTokens ? { countPromptTokens: runner.countPromptTokens.bind(runner) } : {}),
  };
}
