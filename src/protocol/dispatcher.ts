import { closestMatch } from "../shared/closest-match.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { MethodContext, MethodDefinition, MethodTable, ParamsSchema } from "./method.js";

/** Finds the method, validates its params at the edge, and runs it. Errors are thrown as RuntimeError. */
export async function dispatch(
  methods: MethodTable,
  method: string,
  params: Record<string, unknown>,
  context: MethodContext,
): Promise<unknown> {
  const { definition, data } = await validate(methods, method, params);
  if (context.signal.aborted) throw new RuntimeError("cancelled", "Request cancelled");
  return definition.handle(data, context);
}

/**
 * `dispatch` for a server that takes calls in a sequence (stdio): calls are looked up and their
 * params validated in arrival order. A method's schema may be imported on its first call (see
 * `MethodDefinition.params`); without the order, a later `ping` would overtake an earlier call's
 * invalid_params answer. Only validation is ordered: the handlers still run concurrently.
 */
export function createDispatcher(methods: MethodTable): (method: string, params: Record<string, unknown>, context: MethodContext) => Promise<unknown> {
  let previous: Promise<unknown> = Promise.resolve();
  return async (method, params, context) => {
    const validated = previous.then(() => validate(methods, method, params));
    previous = validated.catch(() => undefined);
    const { definition, data } = await validated;
    if (context.signal.aborted) throw new RuntimeError("cancelled", "Request cancelled");
    return definition.handle(data, context);
  };
}

async function validate(methods: MethodTable, method: string, params: Record<string, unknown>): Promise<{ definition: MethodDefinition<unknown>; data: unknown }> {
  const definition = methods.get(method) as MethodDefinition<unknown> | undefined;
  if (definition === undefined) {
    throw new RuntimeError("unknown_method", `Unknown method "${method}". Supported: ${[...methods.keys()].join(", ")}`);
  }
  const schema = typeof definition.params === "function" ? await definition.params() : definition.params;
  const parsed = schema.safeParse(params);
  if (!parsed.success) {
    const issues = parsed.error.issues.flatMap((issue) => describeIssue(issue, schema));
    const summary = issues.map((issue) => (issue.param === "" ? issue.message : `${issue.param}: ${issue.message}`)).join("; ");
    throw new RuntimeError("invalid_params", `Invalid params for "${method}": ${summary}`, { details: { issues } });
  }
  return { definition, data: parsed.data };
}

interface ParamIssue {
  param: string;
  message: string;
}

/** One issue per unknown key, named, with the closest known param as a hint. */
function describeIssue(issue: { readonly path: readonly PropertyKey[]; message: string; code?: string; keys?: readonly string[] }, schema: unknown): ParamIssue[] {
  const parent = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys" && issue.keys !== undefined) {
    const known = Object.keys((schema as { shape?: Record<string, unknown> }).shape ?? {});
    return issue.keys.map((key) => {
      const hint = issue.path.length === 0 ? closestMatch(key, known) : undefined;
      return {
        param: parent === "" ? key : `${parent}.${key}`,
        message: `unknown param${hint === undefined ? "" : ` (did you mean "${hint}"?)`}${known.length > 0 && issue.path.length === 0 ? `; accepted: ${known.join(", ")}` : ""}`,
      };
    });
  }
  return [{ param: parent, message: issue.message }];
}

/**
 * For methods that take no params: unknown keys are tolerated for forward compatibility. Written
 * without zod so ping, doctor and shutdown load none (params is always a JSON object here).
 */
export const noParams: ParamsSchema<Record<string, unknown>> = {
  safeParse: (input) => ({ success: true, data: { ...(input as Record<string, unknown>) } }),
};
