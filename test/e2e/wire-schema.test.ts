import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { allJsonSchemas } from "../../scripts/json-schemas.js";
import { agentEventSchemas } from "../../src/wire/agent-event-schema.js";
import { ERROR_CODES } from "../../src/shared/runtime-error.js";
import { CliProcess } from "../helpers/cli-process.js";
import { dropRecords, recordedCount, validateRecorded, WireTap } from "../helpers/wire-recorder.js";

const SCHEMA_DIR = fileURLToPath(new URL("../../../schema/", import.meta.url));
const V1_METHODS = ["initialize", "ping", "doctor", "plan", "chat", "cancel", "warm_up", "shutdown"];

type Document = { $defs: Record<string, Record<string, unknown>> };

describe("the protocol's JSON Schema (schema/)", () => {
  it("describes every method of the table: params, request, result, and chat's events", async () => {
    const { "v1.schema.json": v1, "jsonrpc.schema.json": jsonrpc } = (await allJsonSchemas()) as Record<string, Document>;
    for (const method of V1_METHODS) {
      for (const part of ["params", "request", "result", "result_message"]) assert.ok(v1!.$defs[`${method}.${part}`], `v1 ${method}.${part}`);
      for (const part of ["params", "request", "result", "response"]) assert.ok(jsonrpc!.$defs[`${method}.${part}`], `jsonrpc ${method}.${part}`);
    }
    assert.ok(jsonrpc!.$defs["$/cancelRequest.request"], "JSON-RPC's own notification");
    const chatEvents = (v1!.$defs["chat.event"]!.oneOf as Array<{ properties: { event: { const: string } } }>).map((option) => option.properties.event.const);
    assert.deepEqual(chatEvents, agentEventSchemas.map((schema) => schema.shape.event.value));
    assert.deepEqual(v1!.$defs.error_code!.enum, ERROR_CODES.filter((code) => code !== "invalid_params"));
  });

  it("schema/ on disk is what the build generates from the code (when built)", async (t) => {
    if (!existsSync(SCHEMA_DIR)) {
      t.skip("schema/ not generated: npm run build writes it");
      return;
    }
    for (const [file, document] of Object.entries(await allJsonSchemas())) {
      assert.deepEqual(JSON.parse(readFileSync(`${SCHEMA_DIR}${file}`, "utf8")), document, `schema/${file} is stale: run npm run build`);
    }
  });
});

describe("the wire recorder (validates every e2e protocol message against schema/)", () => {
  it("sees what a CliProcess exchanges, and finds it valid", async () => {
    const from = recordedCount();
    const proc = new CliProcess(["serve-stdio", "--config", "/nonexistent/local-ai.yaml"]);
    await proc.request({ id: 1, method: "initialize", params: { protocol_versions: [1], client: { name: "t", version: "1" } } });
    await proc.request({ id: "p", method: "ping" });
    await proc.request({ id: "u", method: "nope" });
    await proc.request({ id: "c", method: "chat", params: { input: "hi" } });
    proc.endInput();
    await proc.exited;
    // 4 answers + 2 accepted requests (initialize, ping).
    assert.equal(recordedCount() - from, 6);
    assert.deepEqual(await validateRecorded(from), { problems: [], validated: 6 });
  });

  it("catches an answer its method's schema rejects, an unknown event, and a camelCase key", async () => {
    const from = recordedCount();
    const tap = new WireTap("v1", "made up");
    tap.sent({ id: "x", method: "ping" });
    tap.received('{"id":"x","type":"result","result":{"status":"fine"}}');
    tap.received('{"id":"y","type":"event","event":"llm_chunk","step":0}');
    tap.received('{"id":"z","type":"error","code":"cancelled","message":"m","details":{"freeBytes":1}}');
    tap.received("not json");
    const { problems, validated } = await validateRecorded(from);
    dropRecords(from);
    assert.equal(validated, 5, "the answer, the request it accepted, the event, the error, the garbage line");
    // The request itself was a valid ping: four problems, in order.
    assert.equal(problems.length, 4, problems.join("\n"));
    assert.match(problems[0]!, /ping\.result_message rejects .*status must be equal to constant/);
    assert.match(problems[1]!, /v1 event_message rejects .*llm_chunk/);
    assert.match(problems[2]!, /key "freeBytes" is not snake_case/);
    assert.match(problems[3]!, /not JSON/);
  });
});
