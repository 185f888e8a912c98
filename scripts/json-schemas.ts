import { cliJsonSchema } from "../src/cli/cli-json-schema.js";
import { podJsonSchema } from "../src/pod/pod-json-schema.js";
import { jsonRpcJsonSchema, v1JsonSchema } from "../src/protocol/protocol-json-schema.js";

/** Every JSON Schema document the package ships under schema/, by file name. */
export async function allJsonSchemas(): Promise<Record<string, Record<string, unknown>>> {
  return {
    "v1.schema.json": await v1JsonSchema(),
    "jsonrpc.schema.json": await jsonRpcJsonSchema(),
    "pod.schema.json": podJsonSchema(),
    "cli.schema.json": cliJsonSchema(),
  };
}
