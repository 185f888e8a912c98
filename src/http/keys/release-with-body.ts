/**
 * Calls `release` once the response is over: at once for a body already complete (JSON), else
 * when a streamed body (SSE) has ended, failed, or been cancelled, or the client went away
 * (`signal`). The stream is pulled through, so backpressure is unchanged.
 */
export function releaseWithBody(response: Response, signal: AbortSignal, release: () => void): Response {
  const body = response.body;
  if (body === null || !(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    release();
    return response;
  }
  const done = (): void => {
    signal.removeEventListener("abort", done);
    release();
  };
  if (signal.aborted) done();
  else signal.addEventListener("abort", done, { once: true });
  const reader = body.getReader();
  const passed = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await reader.read();
        if (next.done) {
          done();
          controller.close();
        } else controller.enqueue(next.value);
      } catch (error) {
        done();
        controller.error(error);
      }
    },
    async cancel(reason) {
      done();
      await reader.cancel(reason);
    },
  });
  return new Response(passed, { status: response.status, statusText: response.statusText, headers: response.headers });
}
