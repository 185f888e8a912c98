import { z } from "zod";

/** What a client may send (seed 004 methods); `params` may be omitted where a method takes none. */
export type PodRequest =
  | { method: "run"; input: string }
  | { method: "resume" }
  | { method: "cancel" }
  | { method: "get_status" }
  | { method: "get_history" };

export const POD_METHODS = ["run", "resume", "cancel", "get_status", "get_history"] as const;

const envelope = z.object({ method: z.string(), params: z.record(z.string(), z.unknown()).optional() });
const runParams = z.object({ input: z.string().min(1) });

/** A line -> a request, or the message of the error event its sender gets. */
export function parsePodRequest(line: string): { ok: true; request: PodRequest } | { ok: false; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, message: "invalid request: the line is not JSON" };
  }
  const parsed = envelope.safeParse(value);
  if (!parsed.success) return { ok: false, message: 'invalid request: expected {"method": string, "params"?: object}' };
  const { method, params } = parsed.data;
  switch (method) {
    case "run": {
      const run = runParams.safeParse(params ?? {});
      if (!run.success) return { ok: false, message: "invalid params for run: params.input must be a non-empty string" };
      return { ok: true, request: { method, input: run.data.input } };
    }
    case "resume":
    case "cancel":
    case "get_status":
    case "get_history":
      return { ok: true, request: { method } };
    default:
      return { ok: false, message: `unknown method ${JSON.stringify(method)}; supported: ${POD_METHODS.join(", ")}` };
  }
}
