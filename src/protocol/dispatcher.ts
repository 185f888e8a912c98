import { describeAccepted, keysAt, schemaAt, valueAt } from "../config/accepted-values.js";
import { describeValue } from "../config/config-problem.js";
import { closestMatch } from "../shared/closest-match.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { MethodContext, MethodDefinition, MethodTable, ParamsSchema } from "./method.js";

/** What a server calls for each request: finds the method, validates its params, runs it; errors are thrown as RuntimeError. */
export type Dispatch = (method: string, params: Record<string, unknown>, context: MethodContext) => Promise<unknown>;

/**
 * The one dispatch path: finds the method, validates its params at the edge, and runs it. Calls
 * are looked up and their params validated in arrival order: a method's schema may be imported on
 * its first call (see `MethodDefinition.params`); without the order, a later `ping` would overtake
 * an earlier call's invalid_params answer. Only validation is ordered: the handlers still run
 * concurrently. A request cancelled before validation ends never starts its handler.
 */
export function createDispatcher(methods: MethodTable): Dispatch {
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
    const issues = parsed.error.issues.flatMap((issue) => describeIssue(issue, schema, params));
    const summary = issues.map((issue) => (issue.param === "" ? issue.message : `${issue.param}: ${issue.message}`)).join("; ");
    throw new RuntimeError("invalid_params", `Invalid params for "${method}": ${summary}`, { details: { issues } });
  }
  return { definition, data: parsed.data };
}

interface ParamIssue {
  param: string;
  message: string;
}

interface ZodIssueLike {
  readonly path: readonly PropertyKey[];
  message: string;
  code?: string;
  keys?: readonly string[];
  /** invalid_union: each option's issues (paths relative to the union). */
  errors?: ReadonlyArray<readonly ZodIssueLike[]>;
  /** invalid_union of a discriminated union whose discriminator matched no option. */
  discriminator?: string;
  options?: readonly unknown[];
}

/** zod's codes that say "not a value of this shape": these get what the param accepts instead of "Invalid input". */
const SHAPE_CODES: ReadonlySet<string> = new Set(["invalid_union", "invalid_type", "invalid_value"]);

/**
 * One issue per unknown key, named, with the closest known param as a hint; a value of the wrong
 * shape says what the param accepts (the config's own describer, `config/accepted-values.ts`) and
 * what was found. A union whose value has the type of exactly one option reports that option's
 * issues (a list with a bad part says which part is wrong, not "must be a string or a list").
 */
function describeIssue(issue: ZodIssueLike, schema: unknown, params: unknown, base: readonly PropertyKey[] = []): ParamIssue[] {
  const at = [...base, ...issue.path];
  const parent = at.map(String).join(".");
  if (issue.code === "unrecognized_keys" && issue.keys !== undefined) {
    const known = isZod(schema) ? keysAt(schema, at) : [];
    return issue.keys.map((key) => {
      const hint = at.length === 0 ? closestMatch(key, known) : undefined;
      return {
        param: parent === "" ? key : `${parent}.${key}`,
        message: `unknown param${hint === undefined ? "" : ` (did you mean "${hint}"?)`}${known.length > 0 && at.length === 0 ? `; accepted: ${known.join(", ")}` : ""}`,
      };
    });
  }
  if (issue.code === "invalid_union" && issue.discriminator !== undefined && issue.options !== undefined) {
    return [{ param: parent, message: withFound(`must be one of ${issue.options.map((option) => JSON.stringify(option)).join(", ")}`, valueAt(params, at)) }];
  }
  if (issue.code === "invalid_union" && issue.errors !== undefined) {
    // An option that failed only below its root took the value's type: its issues are the real ones.
    const typed = issue.errors.filter((errors) => !errors.some((error) => error.path.length === 0 && error.code === "invalid_type"));
    const [only, ...more] = typed;
    if (only !== undefined && only.length > 0 && more.length === 0) return only.flatMap((error) => describeIssue(error, schema, params, at));
  }
  const accepted = issue.code !== undefined && SHAPE_CODES.has(issue.code) && isZod(schema) ? describeAccepted(schemaAt(schema, at)) : undefined;
  if (accepted === undefined) return [{ param: parent, message: issue.message }];
  const value = valueAt(params, at);
  return [{ param: parent, message: value === undefined && issue.code === "invalid_type" ? `is required: must be ${accepted}` : withFound(`must be ${accepted}`, value) }];
}

/** The describer reads zod's schema objects; a hand-written ParamsSchema keeps zod-free messages. */
function isZod(schema: unknown): boolean {
  return typeof schema === "object" && schema !== null && "_zod" in schema;
}

function withFound(message: string, value: unknown): string {
  const found = describeValue(value);
  return found === undefined ? message : `${message} (found ${found})`;
}

/**
 * For methods that take no params: unknown keys are tolerated for forward compatibility. Written
 * without zod so ping, doctor and shutdown load none (params is always a JSON object here).
 */
export const noParams: ParamsSchema<Record<string, unknown>> = {
  safeParse: (input) => ({ success: true, data: { ...(input as Record<string, unknown>) } }),
};
