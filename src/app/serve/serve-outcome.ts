/**
 * How a serving bootstrap (serve-http, serve-socket, serve-stdio, chat) ended: it ran and stopped,
 * and the process should exit with `exitCode` now (stdin or a lingering socket may still hold the
 * event loop open); or it could not start, with the one line that says why (for stderr, exit 1).
 */
export type ServeOutcome = { ok: true; exitCode: number } | { ok: false; message: string };
