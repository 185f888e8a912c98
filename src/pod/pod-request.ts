import { podEnvelope, podRequestParams, type PodMethod } from "./pod-schemas.js";

/** What a client may send (seed 004 methods); `params` may be omitted where a method takes none. */
export type PodRequest =
  | { method: "run"; input: string }
  | { method: "resume" }
  | { method: "cancel" }
  | { method: "get_status" }
  | { method: "get_history" };

export const POD_METHODS = Object.keys(podRequestParams) as PodMethod[];

const isPodMethod = (method: string): method is PodMethod => Object.hasOwn(podRequestParams, method);

export type ParsedPodRequest = { ok: true; request: PodRequest } | { ok: false; message: string };

/** A line -> a request, or the message of the error event its sender gets. */
export function parsePodRequest(line: string): ParsedPodRequest {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, message: "invalid request: the line is not JSON" };
  }
  return parsePodMessage(value);
}

/** A method message (a parsed line, or an object handed to the direct call) -> a request, validated the same way. */
export function parsePodMessage(value: unknown): ParsedPodRequest {
  const parsed = podEnvelope.safeParse(value);
  if (!parsed.success) return { ok: false, message: 'invalid request: expected {"method": string, "params"?: object}' };
  const { method, params } = parsed.data;
  if (!isPodMethod(method)) return { ok: false, message: `unknown method ${JSON.stringify(method)}; supported: ${POD_METHODS.join(", ")}` };
  switch (method) {
    case "run": {
      const run = podRequestParams.run.safeParse(params ?? {});
      if (!run.success) return { ok: false, message: "invalid params for run: params.input must be a non-empty string" };
      return { ok: true, request: { method, input: run.data.input } };
    }
    case "resume":
    case "cancel":
    case "get_status":
    case "get_history":
      return { ok: true, request: { method } };
    default: {
      const unreachable: never = method;
      throw new Error(`unhandled pod method ${String(unreachable)}`);
    }
  }
}
