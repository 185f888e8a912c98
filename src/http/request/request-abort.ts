export interface RequestAbort {
  controller: AbortController;
  /** Detaches the listeners; call once the work is over. */
  dispose(): void;
}

/**
 * One controller for the work of a request: aborted when the client's connection closes (the
 * request's own signal) or when the server shuts down, so the engine stops at once either way.
 */
export function requestAbort(requestSignal: AbortSignal, shutdownSignal?: AbortSignal): RequestAbort {
  const controller = new AbortController();
  const onClient = (): void => controller.abort("client disconnected");
  const onShutdown = (): void => controller.abort("server shutting down");
  if (requestSignal.aborted) onClient();
  if (shutdownSignal?.aborted === true) onShutdown();
  requestSignal.addEventListener("abort", onClient, { once: true });
  shutdownSignal?.addEventListener("abort", onShutdown, { once: true });
  return {
    controller,
    dispose: () => {
      requestSignal.removeEventListener("abort", onClient);
      shutdownSignal?.removeEventListener("abort", onShutdown);
    },
  };
}
