import { noParams } from "../dispatcher.js";
import { defineMethod, type MethodDefinition } from "../method.js";
import type { StdioControl } from "../stdio-server.js";

/** Answers first; the server then stops reading, lets in-flight work end, drains and exits 0. */
export function shutdownMethod(control: StdioControl): MethodDefinition<never> {
  return defineMethod({
    control: true,
    params: noParams,
    result: () => import("./result-schemas.js").then((schemas) => schemas.statusResult),
    handle: async () => {
      control.requestShutdown("shutdown requested");
      return { status: "ok" as const };
    },
  });
}
