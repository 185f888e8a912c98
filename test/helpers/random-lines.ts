/**
 * Random request lines for the stdio front doors, each with the answer it must get. Seeded (a
 * small PRNG, not Math.random) so a failing run is replayed with the same seed. Ids are unique
 * over the whole run so no two requests share an id in flight.
 */

export type Dialect = "v1" | "jsonrpc";

/** `outcome`: "result", a v1 error code, or a JSON-RPC error code as a string ("-32601"). */
export type Expectation =
  | { kind: "none" }
  | { kind: "id"; id: string | number; outcome: string }
  | { kind: "null"; outcome: string }
  | { kind: "batch"; entries: Array<{ id: string | number | null; outcome: string }> };

export interface RandomLine {
  category: string;
  bytes: Buffer;
  expect: Expectation;
}

/** mulberry32: tiny, fast, good enough to pick cases. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KNOWN = new Set(["initialize", "ping", "doctor", "plan", "chat", "cancel", "warm_up", "shutdown"]);

export class LineGenerator {
  private n = 0;
  private readonly random: () => number;

  constructor(
    private readonly dialect: Dialect,
    seed: number,
    private readonly maxLineBytes: number,
  ) {
    this.random = prng(seed);
  }

  private int(max: number): number {
    return Math.floor(this.random() * max);
  }

  private pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  private nextId(): string | number {
    this.n += 1;
    switch (this.int(4)) {
      case 0:
        return this.n * 1e10; // large, exact in a double
      case 1:
        return this.n + 0.5;
      default:
        return `r${this.n}`;
    }
  }

  private code(v1: string, jsonrpc: number): string {
    return this.dialect === "v1" ? v1 : String(jsonrpc);
  }

  private request(id: string | number | undefined, method: string, params?: unknown): Record<string, unknown> {
    return { ...(this.dialect === "jsonrpc" ? { jsonrpc: "2.0" } : {}), ...(id === undefined ? {} : { id }), method, ...(params === undefined ? {} : { params }) };
  }

  private text(length: number, from = 0x20, to = 0x7e): string {
    let out = "";
    for (let i = 0; i < length; i++) out += String.fromCharCode(from + this.int(to - from + 1));
    return out;
  }

  private line(category: string, value: string | Buffer, expect: Expectation): RandomLine {
    return { category, bytes: typeof value === "string" ? Buffer.from(value) : value, expect };
  }

  next(): RandomLine {
    const roll = this.int(100);
    if (roll < 30) return this.good();
    if (roll < 40) return this.unknownMethod();
    if (roll < 50) return this.badParams();
    if (roll < 58) return this.garbage();
    if (roll < 64) return this.nonObject();
    if (roll < 69) return this.badId();
    if (roll < 74) return this.hugeId();
    if (roll < 79) return this.deep();
    if (roll < 83) return this.invalidUtf8();
    if (roll < 88) return this.overCap();
    if (roll < 92) return this.blank();
    return this.dialect === "jsonrpc" ? this.batchOrNotification() : this.good();
  }

  private good(): RandomLine {
    const id = this.nextId();
    const params = this.pick([undefined, {}, { anything: this.text(5) }]);
    return this.line("ping", JSON.stringify(this.request(id, "ping", params)), { kind: "id", id, outcome: "result" });
  }

  private unknownMethod(): RandomLine {
    const id = this.nextId();
    let method = this.text(1 + this.int(30), 0x21, 0x7e);
    if (KNOWN.has(method)) method = `${method}_x`;
    return this.line("unknown method", JSON.stringify(this.request(id, method)), { kind: "id", id, outcome: this.code("unknown_method", -32601) });
  }

  private badParams(): RandomLine {
    const id = this.nextId();
    const which = this.int(4);
    if (which === 0) return this.line("bad params", JSON.stringify(this.request(id, "cancel", { bogus: 1 })), { kind: "id", id, outcome: this.code("invalid_request", -32602) });
    if (which === 1) return this.line("bad params", JSON.stringify(this.request(id, "initialize", { protocol_versions: "x" })), { kind: "id", id, outcome: this.code("invalid_request", -32602) });
    if (which === 2) return this.line("bad params", JSON.stringify(this.request(id, "chat", { sesion_id: "s", input: "hi" })), { kind: "id", id, outcome: this.code("invalid_request", -32602) });
    // params of the wrong JSON type: an envelope error in both dialects.
    return this.line("bad params", JSON.stringify(this.request(id, "ping", this.pick([7, "x", true]))), { kind: "id", id, outcome: this.code("invalid_request", -32600) });
  }

  private garbage(): RandomLine {
    // Starts with a letter that no JSON value starts with, so it can never parse.
    return this.line("garbage", `x${this.text(this.int(200))}`, { kind: "null", outcome: this.code("invalid_json", -32700) });
  }

  private nonObject(): RandomLine {
    const values = this.dialect === "v1" ? ["1", '"ping"', "null", "true", "[1,2]", "[]", "-0.5e3"] : ["1", '"ping"', "null", "true", "-0.5e3", "[]"];
    return this.line("JSON non-object", this.pick(values), { kind: "null", outcome: this.code("invalid_request", -32600) });
  }

  private badId(): RandomLine {
    const id = this.pick(["true", "{}", "[1]", "1e999", '{"x":1}']);
    const head = this.dialect === "jsonrpc" ? '{"jsonrpc":"2.0",' : "{";
    return this.line("bad id", `${head}"id":${id},"method":"ping"}`, { kind: "null", outcome: this.code("invalid_request", -32600) });
  }

  private hugeId(): RandomLine {
    this.n += 1;
    const room = Math.max(16, this.maxLineBytes - 80);
    const id = `h${this.n}_${"z".repeat(this.int(room))}`;
    return this.line("huge id", JSON.stringify(this.request(id, "ping")), { kind: "id", id, outcome: "result" });
  }

  private deep(): RandomLine {
    const room = Math.floor((this.maxLineBytes - 80) / 6);
    const depth = 1 + this.int(Math.max(1, room));
    if (this.random() < 0.5) {
      const id = this.nextId();
      const head = JSON.stringify(this.request(id, "ping")).slice(0, -1);
      return this.line("deep params", `${head},"params":{"a":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}}`, { kind: "id", id, outcome: "result" });
    }
    const nest = Math.max(1, Math.min(depth * 2, Math.floor(this.maxLineBytes / 2) - 2));
    const text = `${"[".repeat(nest)}${"]".repeat(nest)}`;
    // JSON-RPC reads an outer array as a batch of one entry, itself an array: one reject, in an array.
    return this.dialect === "v1"
      ? this.line("deep array", text, { kind: "null", outcome: "invalid_request" })
      : this.line("deep array", text, nest === 1 ? { kind: "null", outcome: "-32600" } : { kind: "batch", entries: [{ id: null, outcome: "-32600" }] });
  }

  private invalidUtf8(): RandomLine {
    const bad = Buffer.from(Array.from({ length: 1 + this.int(8) }, () => 0x80 + this.int(0x80)));
    if (this.random() < 0.5) return this.line("invalid UTF-8 garbage", Buffer.concat([Buffer.from("x"), bad]), { kind: "null", outcome: this.code("invalid_json", -32700) });
    // Inside a JSON string the bytes decode to U+FFFD: still a request, for an unknown method.
    const id = this.nextId();
    const [head, tail] = JSON.stringify(this.request(id, "m\u0001")).split("\\u0001") as [string, string];
    return this.line("invalid UTF-8 method", Buffer.concat([Buffer.from(head), bad, Buffer.from(tail)]), { kind: "id", id, outcome: this.code("unknown_method", -32601) });
  }

  private overCap(): RandomLine {
    const length = this.maxLineBytes + 1 + this.int(this.maxLineBytes * 2);
    const id = this.nextId();
    const head = JSON.stringify(this.request(id, "ping", { pad: "" })).slice(0, -3);
    return this.line("over the cap", `${head}${"p".repeat(Math.max(0, length - head.length - 3))}"}}`, { kind: "null", outcome: this.code("invalid_request", -32600) });
  }

  private blank(): RandomLine {
    return this.line("blank", this.pick(["", " ", "\t", "\r", "  \r"]), { kind: "none" });
  }

  private batchOrNotification(): RandomLine {
    if (this.random() < 0.4) return this.line("notification", JSON.stringify(this.request(undefined, this.pick(["ping", "nope", "cancel"]), this.pick([undefined, { bogus: 1 }]))), { kind: "none" });
    const size = 1 + this.int(4);
    const entries: Array<{ id: string | number | null; outcome: string }> = [];
    const items: unknown[] = [];
    for (let i = 0; i < size; i++) {
      if (this.random() < 0.25) {
        items.push(this.request(undefined, "ping"));
        continue;
      }
      const id = this.nextId();
      const known = this.random() < 0.7;
      items.push(this.request(id, known ? "ping" : "nope"));
      entries.push({ id, outcome: known ? "result" : "-32601" });
    }
    return this.line("batch", JSON.stringify(items), entries.length === 0 ? { kind: "none" } : { kind: "batch", entries });
  }
}
