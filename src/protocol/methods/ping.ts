import { noParams } from "../dispatcher.js";
import { defineMethod } from "../method.js";

export const pingMethod = defineMethod({
  params: noParams,
  handle: async () => ({ status: "ok" }),
});
