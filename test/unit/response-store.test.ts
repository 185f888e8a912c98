import assert from "node:assert/strict";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import pino from "pino";
import type { ResponseObject } from "../../src/http/responses/response-object.js";
import type { ResponseReader } from "../../src/http/responses/response-reader.js";
import { ResponseStore, type StoredResponse } from "../../src/http/responses/response-store.js";

const dirs: string[] = [];
after(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function folder(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "response-store-"));
  dirs.push(dir);
  return path.join(dir, "responses");
}

const id = (n: number): string => `resp_${n.toString(16).padStart(24, "0")}`;

function record(n: number, text = "x"): StoredResponse {
  return { version: 1, response: { id: id(n), output_text: text } as unknown as ResponseObject, input_items: [], context: [{ role: "user", content: text }], cache_key: `responses/${id(n)}` };
}

/** The store's clock, moved by the test. */
function clock(): { now: () => number; advance(ms: number): void } {
  let at = 1_000_000;
  return { now: () => at, advance: (ms) => (at += ms) };
}

const logger = pino({ level: "silent" });
const OPERATOR: ResponseReader = { key: "default", operator: true };
const ALPHA: ResponseReader = { key: "alpha", operator: false };
const BETA: ResponseReader = { key: "beta", operator: false };
const itemKey = (n: number): string => n.toString(16).padStart(24, "f");

/** A record as this version stores it: owned by `owner`, its item ids carrying their own key. */
function owned(n: number, owner: string): StoredResponse {
  return { ...record(n), version: 2, owner, item_key: itemKey(n) };
}

describe("ResponseStore (real files)", () => {
  it("keeps at most max_stored: the oldest go first", async () => {
    const dir = await folder();
    const time = clock();
    const store = new ResponseStore({ dir, maxStored: 2, maxBytes: 1 << 20, ttlMs: 60_000 }, logger, time.now);
    for (const n of [1, 2, 3]) {
      await store.put(record(n));
      time.advance(1);
    }
    assert.equal(await store.get(id(1), OPERATOR), null);
    assert.equal((await store.get(id(3), OPERATOR))?.response.id, id(3));
    assert.deepEqual((await readdir(dir)).sort(), [`${id(2)}.json`, `${id(3)}.json`]);
  });

  it("keeps at most max_bytes in all, and never stores one response larger than that", async () => {
    const dir = await folder();
    const time = clock();
    const size = Buffer.byteLength(JSON.stringify(record(1, "a".repeat(100))));
    const store = new ResponseStore({ dir, maxStored: 100, maxBytes: size * 2 + 10, ttlMs: 60_000 }, logger, time.now);
    for (const n of [1, 2, 3]) {
      await store.put(record(n, "a".repeat(100)));
      time.advance(1);
    }
    assert.deepEqual((await readdir(dir)).sort(), [`${id(2)}.json`, `${id(3)}.json`]);
    await store.put(record(4, "b".repeat(size * 3)));
    assert.equal(await store.get(id(4), OPERATOR), null);
    assert.deepEqual((await readdir(dir)).sort(), [`${id(2)}.json`, `${id(3)}.json`], "a too large response evicts nothing");
  });

  it("expires after ttl: get finds nothing and the file is removed; delete says whether it was there", async () => {
    const dir = await folder();
    const time = clock();
    const store = new ResponseStore({ dir, maxStored: 10, maxBytes: 1 << 20, ttlMs: 1000 }, logger, time.now);
    await store.put(record(1));
    await store.put(record(2));
    time.advance(1001);
    assert.equal(await store.get(id(1), OPERATOR), null);
    assert.deepEqual(await readdir(dir), [`${id(2)}.json`]);
    assert.equal(await store.delete(id(2), OPERATOR), false, "an expired response counts as gone");
    await store.put(record(3));
    assert.equal(await store.delete(id(3), OPERATOR), true);
    assert.equal(await store.delete(id(3), OPERATOR), false);
    assert.equal(await store.get("../../etc/passwd", OPERATOR), null, "ids that are not ours never reach a path");
  });

  it("a new store finds what an earlier one wrote, and removes leftovers of a crashed write", async () => {
    const dir = await folder();
    await new ResponseStore({ dir, maxStored: 10, maxBytes: 1 << 20, ttlMs: 60_000 }, logger).put(record(7));
    await writeFile(path.join(dir, `.${id(8)}.json.123.abcdef.tmp`), "partial");
    const reopened = new ResponseStore({ dir, maxStored: 10, maxBytes: 1 << 20, ttlMs: 60_000 }, logger);
    assert.equal((await reopened.get(id(7), OPERATOR))?.response.id, id(7));
    assert.deepEqual(await readdir(dir), [`${id(7)}.json`]);
  });

  it("a response is its owner's (and the operator's): to another key get, getByItemKey and delete are as for an unknown id", async () => {
    const dir = await folder();
    const store = new ResponseStore({ dir, maxStored: 10, maxBytes: 1 << 20, ttlMs: 60_000 }, logger);
    await store.put(owned(1, "alpha"));
    assert.equal(await store.get(id(1), BETA), null);
    assert.equal(await store.getByItemKey(itemKey(1), BETA), null);
    assert.equal(await store.delete(id(1), BETA), false);
    assert.equal((await store.get(id(1), ALPHA))?.response.id, id(1), "another key's delete removed nothing");
    assert.equal((await store.getByItemKey(itemKey(1), ALPHA))?.response.id, id(1));
    assert.equal((await store.get(id(1), OPERATOR))?.response.id, id(1));
    assert.equal(await store.getByItemKey(id(1).slice(5), ALPHA), null, "the id's hex names no items");
    assert.equal(await store.delete(id(1), ALPHA), true);
    assert.equal(await store.get(id(1), OPERATOR), null);
    await store.put(owned(2, "alpha"));
    assert.equal(await store.delete(id(2), OPERATOR), true, "the operator may delete any response");
  });

  it("a record stored before owners (version 1) is the operator's alone; its item ids still carry the id's hex", async () => {
    const dir = await folder();
    const store = new ResponseStore({ dir, maxStored: 10, maxBytes: 1 << 20, ttlMs: 60_000 }, logger);
    await store.put(record(3));
    assert.deepEqual(await readdir(dir), [`${id(3)}.json`]);
    for (const reader of [ALPHA, { key: "none", operator: false }]) {
      assert.equal(await store.get(id(3), reader), null);
      assert.equal(await store.delete(id(3), reader), false);
    }
    assert.equal((await store.get(id(3), OPERATOR))?.response.id, id(3));
    assert.equal((await store.getByItemKey(id(3).slice(5), OPERATOR))?.response.id, id(3));
  });

  it("the owner and the item key survive a restart (in the file and its name)", async () => {
    const dir = await folder();
    await new ResponseStore({ dir, maxStored: 10, maxBytes: 1 << 20, ttlMs: 60_000 }, logger).put(owned(4, "alpha"));
    await writeFile(path.join(dir, `.${id(5)}.${itemKey(5)}.json.123.abcdef.tmp`), "partial");
    const reopened = new ResponseStore({ dir, maxStored: 10, maxBytes: 1 << 20, ttlMs: 60_000 }, logger);
    assert.equal(await reopened.getByItemKey(itemKey(4), BETA), null);
    assert.equal((await reopened.getByItemKey(itemKey(4), ALPHA))?.owner, "alpha");
    assert.equal(await reopened.get(id(4), BETA), null);
    assert.deepEqual(await readdir(dir), [`${id(4)}.${itemKey(4)}.json`]);
    assert.equal(await reopened.delete(id(4), ALPHA), true);
    assert.deepEqual(await readdir(dir), []);
  });
});
