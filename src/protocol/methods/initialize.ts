import { RuntimeError } from "../../shared/runtime-error.js";
import { CANCEL_NOTIFICATION } from "./cancel-request.js";
import { EVENT_NOTIFICATION } from "../jsonrpc/jsonrpc-dialect.js";
import { defineMethod, type MethodDefinition } from "../method.js";

export const SUPPORTED_PROTOCOL_VERSIONS = [1] as const;


export interface InitializeDeps {
  server: { name: string; version: string };
  /** Derived from the method table so the answer never claims a method that is not there. */
  methods: () => readonly string[];
  maxLineBytes: number;
  /** The stdio dialect this server speaks (chosen by --protocol). */
  wire: "v1" | "jsonrpc";
}

/** Picks the highest version both sides speak; hosts that send none get v1. */
export function initializeMethod(deps: InitializeDeps): MethodDefinition<never> {
  return defineMethod({
    params: () => import("./params-schemas.js").then((schemas) => schemas.initializeParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.initializeResult),
    handle: async (input, context) => {
      const offered = input.protocol_versions ?? [1];
      const numeric = offered.map((version) => (typeof version === "string" ? Number(version) : version));
      const common = SUPPORTED_PROTOCOL_VERSIONS.filter((version) => numeric.includes(version));
      const chosen = common.length > 0 ? Math.max(...common) : null;
      if (chosen === null) {
        throw new RuntimeError(
          "invalid_request",
          `No common protocol version: the host offered [${offered.join(", ")}], this server speaks [${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}]`,
          { details: { supported: [...SUPPORTED_PROTOCOL_VERSIONS] } },
        );
      }
      if (input.client !== undefined) context.log.info({ client: input.client }, "host initialized");
      const methods = deps.methods();
      return {
        protocol_version: chosen,
        capabilities: {
          parallel_chat: methods.includes("chat"),
          targeted_cancel: methods.includes("cancel"),
          methods: [...methods],
          max_line_bytes: deps.maxLineBytes,
          wire: deps.wire,
          ...(deps.wire === "jsonrpc" ? { event_notification: EVENT_NOTIFICATION, cancel_notification: CANCEL_NOTIFICATION } : {}),
        },
        server: deps.server,
      };
    },
  });
}
