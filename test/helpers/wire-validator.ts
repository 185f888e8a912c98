import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { allJsonSchemas } from "../../scripts/json-schemas.js";

/** What the wire recorder keeps: one message a test saw (a JSON-RPC batch is one record per entry), and what it belongs to. */
export interface WireRecord {
  protocol: WireProtocol;
  /** `received`: written by the server (core -> host); `accepted`: a request the server answered with a result. */
  kind: "received" | "accepted";
  text: string;
  /** The method of the request the message answers (or is), when the sender knows it; resolved when it arrived. */
  method: string | undefined;
  source: string;
}

export type WireProtocol = "v1" | "jsonrpc" | "pod" | "cli.doctor" | "cli.plan" | "cli.mcp_list";

const DOCUMENT: Record<WireProtocol, string> = { v1: "v1", jsonrpc: "jsonrpc", pod: "pod", "cli.doctor": "cli", "cli.plan": "cli", "cli.mcp_list": "cli" };

/**
 * Keys that hold data we do not name (a tool's arguments, stored conversation items) are exempt
 * from the snake_case rule; every other key on every wire is snake_case.
 */
const FREE_FORM_KEYS = new Set(["args", "items"]);
const SNAKE_CASE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

/** Validates records against the generated schema documents (built in process from the same zod schemas as schema/). */
export async function createWireValidator(): Promise<(record: WireRecord) => string[]> {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  for (const document of Object.values(await allJsonSchemas())) ajv.addSchema(document);
  const cache = new Map<string, ValidateFunction | null>();
  const schema = (protocol: WireProtocol, name: string): ValidateFunction | null => {
    const ref = `urn:local-ai-core:schema:${DOCUMENT[protocol]}#/$defs/${name.replaceAll("~", "~0").replaceAll("/", "~1")}`;
    if (!cache.has(ref)) {
      let found: ValidateFunction | null = null;
      try {
        found = ajv.getSchema(ref) ?? null;
      } catch {
        found = null;
      }
      cache.set(ref, found);
    }
    return cache.get(ref) ?? null;
  };
  /** The method's own definition when there is one, else the protocol-wide one. */
  const pick = (protocol: WireProtocol, method: string | undefined, own: string, general: string): [string, ValidateFunction] => {
    const specific = method === undefined ? null : schema(protocol, `${method}.${own}`);
    if (specific !== null) return [`${method}.${own}`, specific];
    const fallback = schema(protocol, general);
    if (fallback === null) throw new Error(`no definition ${general} in the ${protocol} schema`);
    return [general, fallback];
  };

  return (record) => {
    let value: unknown;
    try {
      value = JSON.parse(record.text);
    } catch {
      return [`${record.source}: not JSON: ${record.text.slice(0, 200)}`];
    }
    const problems: string[] = [];
    const check = (message: unknown, method: string | undefined): void => {
      const [name, validate] = definitionFor(record, message, method, pick);
      if (!validate(message)) problems.push(`${record.source}: ${record.protocol} ${name} rejects ${JSON.stringify(message).slice(0, 400)}: ${ajv.errorsText(validate.errors)}`);
      for (const key of nonSnakeKeys(message)) problems.push(`${record.source}: key ${JSON.stringify(key)} is not snake_case in ${JSON.stringify(message).slice(0, 300)}`);
    };
    check(value, record.method);
    return problems;
  };
}

type Pick = (protocol: WireProtocol, method: string | undefined, own: string, general: string) => [string, ValidateFunction];

function definitionFor(record: WireRecord, message: unknown, method: string | undefined, pick: Pick): [string, ValidateFunction] {
  const object = (typeof message === "object" && message !== null ? message : {}) as Record<string, unknown>;
  switch (record.protocol) {
    case "v1":
      if (record.kind === "accepted") return pick("v1", method, "request", "request");
      if (object.type === "event") return pick("v1", method, "event_message", "event_message");
      if (object.type === "result") return pick("v1", method, "result_message", "result_message");
      return pick("v1", undefined, "", object.type === "error" ? "error_message" : "outbound");
    case "jsonrpc":
      if (record.kind === "accepted") return pick("jsonrpc", method, "request", "request");
      if (object.method === "$/event") return pick("jsonrpc", method, "event_notification", "event_notification");
      if ("result" in object) return pick("jsonrpc", method, "response", "result_response");
      return pick("jsonrpc", undefined, "", "error_response");
    case "pod":
      return pick("pod", undefined, "", "message");
    case "cli.doctor":
      return pick("cli.doctor", undefined, "", "doctor");
    case "cli.plan":
      return pick("cli.plan", undefined, "", "plan");
    case "cli.mcp_list":
      return pick("cli.mcp_list", undefined, "", "mcp_list");
  }
}

/** Every object key (outside free-form values) that is not snake_case. */
export function nonSnakeKeys(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) nonSnakeKeys(item, found);
  else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (!SNAKE_CASE.test(key) && key !== "jsonrpc") found.push(key);
      if (!FREE_FORM_KEYS.has(key)) nonSnakeKeys(item, found);
    }
  }
  return found;
}
