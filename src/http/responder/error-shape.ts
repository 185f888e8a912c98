import type { Context, MiddlewareHandler } from "hono";
import type { MappedError } from "../http-error.js";

declare module "hono" {
  interface ContextVariableMap {
    /** The error shape of the dialect whose paths the request is on (useErrorShape). */
    errorShape: ErrorShape;
  }
}

/** An error body in the shape a dialect's clients parse; `request_id` is the id a user quotes when asking about the failure. */
export type ErrorShape = (mapped: MappedError, requestId: string | undefined) => unknown;

/** OpenAI's `{"error": {message, type, param, code}}`: every path no dialect claims, chat completions and Responses. */
export const openAiErrorShape: ErrorShape = (mapped, requestId) => ({ error: { ...mapped.body.error, ...(requestId === undefined ? {} : { request_id: requestId }) } });

/** Marks the request as the dialect's: a refusal under its paths (auth, Host, 404, a bad body) takes its error shape. */
export function useErrorShape(shape: ErrorShape): MiddlewareHandler {
  return async (c, next) => {
    c.set("errorShape", shape);
    await next();
  };
}

/** The error shape of the dialect that claimed the request (useErrorShape), OpenAI's by default. */
export function errorShapeOf(c: Context): ErrorShape {
  const shape: ErrorShape | undefined = c.get("errorShape");
  return shape ?? openAiErrorShape;
}
