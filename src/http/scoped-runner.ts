import type { Logger } from "pino";
import type { TurnRunner, TurnRunOptions } from "./http-deps.js";
import type { RequestScope } from "./request-scope.js";

/**
 * The runner every route is given: each turn's events also reach its request's record (tokens,
 * first token) and its log lines carry the request id. The routes never see the difference.
 */
export function scopedRunner(runner: TurnRunner, scope: RequestScope, logger: Logger): TurnRunner {
  const tapped = (options: TurnRunOptions): TurnRunOptions => {
    const record = scope.current();
    if (record === undefined) return { ...options, logger };
    return {
      ...options,
      logger,
      emit: (event) => {
        record.observe(event);
        options.emit(event);
      },
    };
  };
  return {
    runTurn: (request, options) => runner.runTurn(request, tapped(options)),
    runStateless: (request, options) => runner.runStateless(request, tapped(options)),
    ...(runner.countPromptTokens ? { countPromptTokens: runner.countPromptTokens.bind(runner) } : {}),
  };
}
