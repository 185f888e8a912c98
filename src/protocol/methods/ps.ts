import type { PsReport } from "../../engine/scheduler/model-ps.js";
import { defineMethod, type MethodDefinition } from "../method.js";

/**
 * `ps`: the memory budget (`{ram_bytes, vram_bytes, used_ram_bytes, used_vram_bytes}`) and every
 * configured model with its status, memory, idle expiry, pin and requests in flight.
 */
export function psMethod(ps: () => Promise<PsReport>): MethodDefinition<never> {
  return defineMethod({
    params: () => import("./params-schemas.js").then((schemas) => schemas.psParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.psResult),
    handle: async () => ps(),
  });
}
