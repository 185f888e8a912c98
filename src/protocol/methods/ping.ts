import { noParams } from "../dispatcher.js";
import { defineMethod } from "../method.js";

export const pingMethod = defineMethod({
  params: noParams,
  control: true,
  result: () => import("./result-schemas.js").then((schemas) => schemas.statusResult),
  handle: async () => ({ status: "ok" as const }),
});
