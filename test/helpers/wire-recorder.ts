import assert from "node:assert/strict";
import { after } from "node:test";
import type { WireProtocol, WireRecord } from "./wire-validator.js";

/**
 * Records every protocol message the end-to-end tests see (CliProcess stdout in serve-stdio,
 * `doctor --json` / `plan --json` output, Pod socket events, LocalAiClient traffic) and, after the
 * test file, validates each against the JSON Schema generated from the servers' zod schemas, plus
 * the snake_case rule for keys. A file whose server wrote something the schema does not describe
 * fails. It cannot pass by validating nothing unnoticed: every record is validated or reported,
 * and test/unit/wire-recorder.test.ts proves the hook sees CliProcess traffic and catches a bad
 * message.
 */
const records: WireRecord[] = [];

after(async () => {
  if (records.length === 0) return;
  const { problems, validated } = await validateRecorded();
  assert.equal(validated, records.length, "every recorded message was validated");
  assert.deepEqual(problems, [], `${problems.length} of ${records.length} protocol messages do not match schema/`);
});

/** Validates what was recorded so far (the after hook does it for each test file). */
export async function validateRecorded(from = 0): Promise<{ problems: string[]; validated: number }> {
  const { createWireValidator } = await import("./wire-validator.js");
  const validate = await createWireValidator();
  const problems: string[] = [];
  let validated = 0;
  for (const record of records.slice(from)) {
    problems.push(...validate(record));
    validated++;
  }
  return { problems, validated };
}

export function recordedCount(): number {
  return records.length;
}

/** Forgets records from `from` on (the recorder's own test feeds it bad messages on purpose). */
export function dropRecords(from: number): void {
  records.length = from;
}

const key = (id: unknown): string | null => (typeof id === "string" || typeof id === "number" ? `${typeof id}:${String(id)}` : null);

/**
 * One connection's view: what the host sent (so an answer can be matched to its method) and what
 * the server wrote. Create one per process or socket.
 */
export class WireTap {
  private readonly methods = new Map<string, string>();
  private readonly requests = new Map<string, string>();

  constructor(
    readonly protocol: WireProtocol,
    private readonly source: string,
  ) {}

  /** A host -> server message (object or JSON text). */
  sent(message: unknown): void {
    let value = message;
    if (typeof message === "string") {
      try {
        value = JSON.parse(message);
      } catch {
        return;
      }
    }
    for (const entry of Array.isArray(value) ? value : [value]) {
      if (typeof entry !== "object" || entry === null) continue;
      const { id, method } = entry as { id?: unknown; method?: unknown };
      const k = key(id);
      if (k === null || typeof method !== "string") continue;
      this.methods.set(k, method);
      this.requests.set(k, JSON.stringify(entry));
    }
  }

  /** One line the server wrote. */
  received(line: string): void {
    if (this.protocol.startsWith("cli.")) throw new Error("use document() for a whole --json output");
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      records.push({ protocol: this.protocol, kind: "received", text: line, method: undefined, source: this.source });
      return;
    }
    for (const entry of this.protocol === "jsonrpc" && Array.isArray(value) ? value : [value]) this.receivedOne(entry);
  }

  /** The whole stdout of `doctor --json` / `plan --json`. */
  document(text: string): void {
    records.push({ protocol: this.protocol, kind: "received", text, method: undefined, source: this.source });
  }

  /** For LocalAiClient's `trace` option. */
  readonly trace = (direction: "send" | "receive", line: string): void => (direction === "send" ? this.sent(line) : this.received(line));

  private receivedOne(message: unknown): void {
    const object = (typeof message === "object" && message !== null ? message : {}) as Record<string, unknown>;
    const params = (typeof object.params === "object" && object.params !== null ? object.params : {}) as Record<string, unknown>;
    const id = this.protocol === "jsonrpc" && object.method === "$/event" ? params.request_id : object.id;
    const k = key(id);
    const method = k === null ? undefined : this.methods.get(k);
    records.push({ protocol: this.protocol, kind: "received", text: JSON.stringify(message), method, source: this.source });
    // A request the server answered with a result was valid: it must match its request schema.
    const answered = this.protocol === "v1" ? object.type === "result" : "result" in object;
    const request = k === null ? undefined : this.requests.get(k);
    if (answered && request !== undefined && k !== null) {
      this.requests.delete(k);
      records.push({ protocol: this.protocol, kind: "accepted", text: request, method, source: this.source });
    }
  }
}

/** The protocol a CLI invocation speaks on stdout, or null when it is not one the schema covers. */
export function wireProtocolOf(args: readonly string[]): WireProtocol | null {
  const json = args.includes("--json");
  if (args.includes("serve-stdio")) {
    const at = args.indexOf("--protocol");
    const dialect = at === -1 ? "v1" : args[at + 1];
    return dialect === "v1" || dialect === "jsonrpc" ? dialect : null;
  }
  if (args[0] === "doctor" && json) return "cli.doctor";
  if (args[0] === "plan" && json) return "cli.plan";
  if (args[0] === "mcp" && args[1] === "list" && json) return "cli.mcp_list";
  return null;
}
