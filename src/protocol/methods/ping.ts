import { noParams } from "../dispatcher.js";
import { defineMethod } from "../method.js";

export const pingMethod = defineMethod({
  params: noParams,
  control: true,
  handle: async () => ({ status: "ok" }),
});
