import { z, type ZodType } from "zod";
import { ERROR_CODES } from "../shared/runtime-error.js";
import { anyOf, jsonSchemaDocument, withEnvelope } from "../wire/json-schema-document.js";
import { noParams } from "./dispatcher.js";
import { InFlightRequests } from "./in-flight.js";
import { EVENT_NOTIFICATION } from "./jsonrpc/jsonrpc-dialect.js";
import { JSONRPC_INTERNAL_ERROR, JSONRPC_INVALID_PARAMS, JSONRPC_INVALID_REQUEST, JSONRPC_METHOD_NOT_FOUND, JSONRPC_PARSE_ERROR, jsonRpcCodeOf } from "./jsonrpc/jsonrpc-frames.js";
import type { MethodDefinition } from "./method.js";
import { createV1Methods } from "./methods/v1-methods.js";

/**
 * The stdio protocols as JSON Schema documents (schema/v1.schema.json, schema/jsonrpc.schema.json),
 * generated from the method table itself: every method's params schema (the one the server
 * validates with), result and events. A method added to the table is in the schema with nothing
 * else to do. Used by scripts/write-json-schema.ts at build and by the tests that validate what
 * the CLI writes; never on a request path.
 */

interface DescribedMethod {
  name: string;
  params: ZodType;
  result: ZodType;
  events: ZodType | undefined;
}

const refuse = (): never => {
  throw new Error("the schema build never runs a method");
};

/** The table as the server builds it, with services that are never called. */
async function describeMethods(wire: "v1" | "jsonrpc"): Promise<DescribedMethod[]> {
  const table = createV1Methods(
    { server: { name: "local-ai", version: "0" }, maxLineBytes: 1, runDoctor: refuse, runPlan: refuse, sessionRunner: refuse, pull: refuse, unload: refuse, ps: refuse, tokenizer: refuse },
    { requestShutdown: refuse, inFlight: new InFlightRequests() },
    wire,
  );
  const methods: DescribedMethod[] = [];
  for (const [name, definition] of table as ReadonlyMap<string, MethodDefinition<unknown>>) {
    methods.push({ name, params: await paramsOf(name, definition), result: await definition.result(), events: definition.events ? await definition.events() : undefined });
  }
  return methods;
}

/** Methods without params (`noParams`) tolerate any object. */
const ANY_OBJECT = z.record(z.string(), z.unknown());

async function paramsOf(name: string, definition: MethodDefinition<unknown>): Promise<ZodType> {
  if (definition.params === noParams) return ANY_OBJECT;
  const schema: unknown = typeof definition.params === "function" ? await definition.params() : definition.params;
  if (!(schema instanceof z.ZodType)) throw new Error(`method ${name}: its params schema is neither a zod schema nor noParams, so it cannot be described`);
  return schema;
}

const requestId = z.union([z.string(), z.number()]);
/** Wire codes: internal `invalid_params` is sent as `invalid_request` (v1/error-frame.ts). */
const V1_ERROR_CODES = ERROR_CODES.filter((code) => code !== "invalid_params");
const errorCode = z.enum(V1_ERROR_CODES as [string, ...string[]]);
const details = z.record(z.string(), z.unknown());

export async function v1JsonSchema(): Promise<Record<string, unknown>> {
  const methods = await describeMethods("v1");
  const defs: Array<readonly [string, ZodType]> = [["request_id", requestId], ["error_code", errorCode]];
  const requests: ZodType[] = [];
  const results: ZodType[] = [];
  const events: ZodType[] = [];
  for (const method of methods) {
    const request = z.object({ id: requestId, method: z.literal(method.name), params: method.params.optional() }).loose();
    const resultMessage = z.strictObject({ id: requestId, type: z.literal("result"), result: method.result });
    defs.push([`${method.name}.params`, method.params], [`${method.name}.request`, request], [`${method.name}.result`, method.result], [`${method.name}.result_message`, resultMessage]);
    requests.push(request);
    results.push(resultMessage);
    if (method.events !== undefined) {
      const eventMessage = anyOf(withEnvelope(method.events, { id: requestId, type: z.literal("event") }, `method ${method.name}`));
      defs.push([`${method.name}.event`, method.events], [`${method.name}.event_message`, eventMessage]);
      events.push(eventMessage);
    }
  }
  const errorMessage = z.strictObject({ id: requestId.nullable(), type: z.literal("error"), code: errorCode, message: z.string(), details: details.optional() });
  const eventMessage = anyOf(events);
  const resultMessage = anyOf(results);
  const outbound = anyOf([eventMessage, resultMessage, errorMessage]);
  const request = anyOf(requests);
  defs.push(["request", request], ["event_message", eventMessage], ["result_message", resultMessage], ["error_message", errorMessage], ["outbound", outbound], ["message", anyOf([request, outbound])]);
  return jsonSchemaDocument({
    id: "urn:local-ai-core:schema:v1",
    title: "local-ai stdio protocol v1",
    description:
      "serve-stdio's NDJSON protocol (docs/protocol.md): one JSON object per line. `request` is host -> core, `outbound` is core -> host; " +
      "`<method>.request`, `<method>.result_message` and `<method>.event_message` describe one method. Generated from the server's own schemas.",
    definitions: defs,
    root: "message",
  });
}

const JSONRPC = z.literal("2.0");
const STANDARD_CODES = [JSONRPC_PARSE_ERROR, JSONRPC_INVALID_REQUEST, JSONRPC_METHOD_NOT_FOUND, JSONRPC_INVALID_PARAMS, JSONRPC_INTERNAL_ERROR];

export async function jsonRpcJsonSchema(): Promise<Record<string, unknown>> {
  const methods = await describeMethods("jsonrpc");
  const defs: Array<readonly [string, ZodType]> = [["request_id", requestId], ["error_code", errorCode]];
  const requests: ZodType[] = [];
  const responses: ZodType[] = [];
  const notifications: ZodType[] = [];
  for (const method of methods) {
    // No `id`: a notification (never answered).
    const request = z.object({ jsonrpc: JSONRPC, id: requestId.nullable().optional(), method: z.literal(method.name), params: method.params.optional() }).loose();
    const response = z.strictObject({ jsonrpc: JSONRPC, id: requestId.nullable(), result: method.result });
    defs.push([`${method.name}.params`, method.params], [`${method.name}.request`, request], [`${method.name}.result`, method.result], [`${method.name}.response`, response]);
    requests.push(request);
    responses.push(response);
    if (method.events !== undefined) {
      const params = anyOf(withEnvelope(method.events, { request_id: requestId.nullable() }, `method ${method.name}`));
      const notification = z.strictObject({ jsonrpc: JSONRPC, method: z.literal(EVENT_NOTIFICATION), params });
      defs.push([`${method.name}.event`, method.events], [`${method.name}.event_notification`, notification]);
      notifications.push(notification);
    }
  }
  const numbers = [...new Set([...STANDARD_CODES, ...ERROR_CODES.map(jsonRpcCodeOf)])].sort((a, b) => b - a);
  const errorObject = z.strictObject({
    code: z.union(numbers.map((code) => z.literal(code)) as unknown as [ZodType, ZodType, ...ZodType[]]),
    message: z.string(),
    // `code` is the v1 name; `exception` names the failure class of -32603; the error's details follow.
    data: z.object({ code: errorCode, exception: z.string().optional() }).loose().optional(),
  });
  const errorResponse = z.strictObject({ jsonrpc: JSONRPC, id: requestId.nullable(), error: errorObject });
  const single = anyOf([...notifications, ...responses, errorResponse]);
  const request = anyOf(requests);
  defs.push(
    ["request", request],
    ["batch_request", z.array(request).min(1)],
    ["event_notification", anyOf(notifications)],
    ["result_response", anyOf(responses)],
    ["error_response", errorResponse],
    ["outbound", anyOf([single, z.array(single).min(1)])],
  );
  defs.push(["message", anyOf([request, z.array(request).min(1), single, z.array(single).min(1)])]);
  return jsonSchemaDocument({
    id: "urn:local-ai-core:schema:jsonrpc",
    title: "local-ai stdio protocol, JSON-RPC 2.0 dialect",
    description:
      "serve-stdio --protocol jsonrpc (docs/protocol-jsonrpc.md): the v1 methods as JSON-RPC 2.0 over NDJSON, events as `$/event` notifications, " +
      "batches as arrays. `request`/`batch_request` are host -> core, `outbound` is core -> host. Generated from the server's own schemas.",
    definitions: defs,
    root: "message",
  });
}
