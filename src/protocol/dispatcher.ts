import { z } from "zod";
import { RuntimeError } from "../shared/runtime-error.js";
import type { MethodContext, MethodDefinition, MethodTable } from "./method.js";

/** Finds the method, validates its params at the edge, and runs it. Errors are thrown as RuntimeError. */
export async function dispatch(
  methods: MethodTable,
  method: string,
  params: Record<string, unknown>,
  context: MethodContext,
): Promise<unknown> {
  const definition = methods.get(method) as MethodDefinition<unknown> | undefined;
  if (definition === undefined) {
    throw new RuntimeError("unknown_method", `Unknown method "${method}". Supported: ${[...methods.keys()].join(", ")}`);
  }
  const parsed = definition.params.safeParse(params);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({
      param: issue.path.map(String).join("."),
      message: issue.message,
    }));
    const summary = issues.map((issue) => (issue.param === "" ? issue.message : `${issue.param}: ${issue.message}`)).join("; ");
    throw new RuntimeError("invalid_params", `Invalid params for "${method}": ${summary}`, { details: { issues } });
  }
  if (context.signal.aborted) throw new RuntimeError("cancelled", "Request cancelled");
  return definition.handle(parsed.data, context);
}

/** For methods that take no params: unknown keys are tolerated for forward compatibility. */
export const noParams = z.object({}).loose();
