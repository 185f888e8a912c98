import { z, type ZodType } from "zod";
import { anyOf, jsonSchemaDocument } from "../wire/json-schema-document.js";
import { podEventSchemas, podRequestParams } from "./pod-schemas.js";

/**
 * The Pod protocol (seed 004, docs/protocol-pod.md) as a JSON Schema document
 * (schema/pod.schema.json), generated from the request table the pod validates with and its events.
 */
export function podJsonSchema(): Record<string, unknown> {
  const defs: Array<readonly [string, ZodType]> = [];
  const requests: ZodType[] = [];
  for (const [method, params] of Object.entries(podRequestParams)) {
    const request = z.object({ method: z.literal(method), params: params.optional() }).loose();
    defs.push([`${method}.params`, params], [`${method}.request`, request]);
    requests.push(request);
  }
  for (const event of podEventSchemas) defs.push([`${event.shape.event.value}.event`, event]);
  const request = anyOf(requests);
  const event = anyOf([...podEventSchemas]);
  defs.push(["request", request], ["event", event], ["message", anyOf([request, event])]);
  return jsonSchemaDocument({
    id: "urn:local-ai-core:schema:pod",
    title: "local-ai Pod protocol",
    description: "serve-socket's Pod protocol on a Unix socket: `request` is client -> pod, `event` is pod -> client (one JSON object per line). Generated from the pod's own schemas.",
    definitions: defs,
    root: "message",
  });
}
