import type { Logger } from "pino";
import type { DoctorReport } from "../../diagnostics/doctor-report.js";
import { noParams } from "../dispatcher.js";
import { defineMethod, type MethodDefinition } from "../method.js";

/** The same report as `local-ai doctor --json`, as data. */
export function doctorMethod(runDoctor: (signal: AbortSignal, log: Logger) => Promise<DoctorReport>): MethodDefinition<never> {
  return defineMethod({
    params: noParams,
    result: () => import("./result-schemas.js").then((schemas) => schemas.doctorResult),
    handle: async (_params, context) => runDoctor(context.signal, context.log),
  });
}
