import assert from "node:assert/strict";
import { mkdir, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { FileSessionStore } from "../../src/store/file-session-store.js";
import { parseHistory } from "../../src/store/history-file.js";
import { sessionPaths } from "../../src/store/session-paths.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { makeEntry, tempDataDir } from "../helpers/store-fixtures.js";

const USER = "u1";
const SESSION = "s1";

describe("session history", () => {
  let dataDir: string;
  let store: FileSessionStore;
  let file: string;
  beforeEach(async () => {
    dataDir = await tempDataDir();
    store = new FileSessionStore(dataDir);
    file = sessionPaths(dataDir, USER, SESSION).history;
  });
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  const append = async (count: number): Promise<void> => {
    for (let n = 1; n <= count; n += 1) await store.appendTurn(USER, SESSION, makeEntry(n));
  };
  const corruptFiles = async (): Promise<string[]> =>
    (await readdir(path.dirname(file))).filter((name) => name.startsWith("history.jsonl.corrupt-"));

  it("loads nothing and warns nothing for a new session", async () => {
    assert.deepEqual(await store.loadHistory(USER, SESSION), { messages: [], warnings: [] });
  });

  it("round-trips appended turns, one line each, in order", async () => {
    await append(3);
    const loaded = await store.loadHistory(USER, SESSION);
    assert.deepEqual(loaded.warnings, []);
    assert.deepEqual(loaded.messages, [1, 2, 3].flatMap((n) => makeEntry(n).messages));
    const lines = (await readFile(file, "utf8")).split("\n");
    assert.equal(lines.length, 4);
    assert.equal(lines[3], "");
    assert.deepEqual(await store.readTurns(USER, SESSION), [1, 2, 3].map((n) => makeEntry(n)));
  });

  it("repairs a torn last line (a kill mid-write): keeps the good turns, warns, keeps the bad bytes", async () => {
    await append(3);
    const original = await readFile(file);
    await truncate(file, original.length - 15);
    const torn = await readFile(file);
    const { logger, records } = captureLogger();
    store = new FileSessionStore(dataDir, { logger });

    const loaded = await store.loadHistory(USER, SESSION);
    assert.deepEqual(loaded.messages, [1, 2].flatMap((n) => makeEntry(n).messages));
    assert.equal(loaded.warnings.length, 1);
    assert.match(loaded.warnings[0] ?? "", /corrupt at line 3 \(a torn last line.*repaired to the last 2 good turns \(bad data kept in history\.jsonl\.corrupt-/);
    const kept = await corruptFiles();
    assert.equal(kept.length, 1);
    assert.deepEqual(await readFile(path.join(path.dirname(file), kept[0] ?? "")), torn);
    assert.ok(loaded.warnings[0]?.includes(kept[0] ?? "?"));
    assert.ok(records().some((record) => record.level === 40 && String(record.msg).includes("torn")));

    // The file itself is repaired: the next load is clean and appends continue normally.
    assert.deepEqual((await store.loadHistory(USER, SESSION)).warnings, []);
    await store.appendTurn(USER, SESSION, makeEntry(4));
    const again = await store.loadHistory(USER, SESSION);
    assert.deepEqual(again.warnings, []);
    assert.deepEqual(again.messages, [1, 2, 4].flatMap((n) => makeEntry(n).messages));
  });

  it("repairs a corrupt line in the middle, keeping every good turn", async () => {
    await append(5);
    const lines = (await readFile(file, "utf8")).split("\n");
    lines[2] = '{"trace_id": "half a line';
    lines[3] = JSON.stringify({ not: "an entry" });
    await writeFile(file, lines.join("\n"));

    const loaded = await store.loadHistory(USER, SESSION);
    assert.deepEqual(loaded.messages, [1, 2, 5].flatMap((n) => makeEntry(n).messages));
    assert.equal(loaded.warnings.length, 1);
    assert.match(loaded.warnings[0] ?? "", /corrupt at line 3: repaired to the last 3 good turns, dropped 2 bad lines/);
    assert.equal((await corruptFiles()).length, 1);
    assert.equal(parseHistory(await readFile(file, "utf8")).badLines.length, 0);
  });

  it("resets a file with no valid turn in it, with a warning", async () => {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, Buffer.from([0xff, 0xfe, 0x00, 0x41, 0x0a, 0x7b, 0x7b, 0x0a, 0x9c]));
    const loaded = await store.loadHistory(USER, SESSION);
    assert.deepEqual(loaded.messages, []);
    assert.equal(loaded.warnings.length, 1);
    assert.match(loaded.warnings[0] ?? "", /unreadable.*reset to an empty history.*corrupt-/);
    assert.equal((await stat(file)).size, 0);
    assert.equal((await corruptFiles()).length, 1);
    await store.appendTurn(USER, SESSION, makeEntry(1));
    assert.deepEqual(await store.loadHistory(USER, SESSION), { messages: makeEntry(1).messages, warnings: [] });
  });

  it("moves aside a history that cannot be read at all, with a warning", async () => {
    await mkdir(file, { recursive: true }); // a folder where the file should be: EISDIR
    const loaded = await store.loadHistory(USER, SESSION);
    assert.deepEqual(loaded.messages, []);
    assert.match(loaded.warnings[0] ?? "", /could not be read \(EISDIR\): reset to an empty history/);
    await store.appendTurn(USER, SESSION, makeEntry(1));
    assert.deepEqual((await store.loadHistory(USER, SESSION)).messages, makeEntry(1).messages);
  });

  it("an append after a torn line does not glue onto the fragment", async () => {
    await append(2);
    await truncate(file, (await stat(file)).size - 10);
    await store.appendTurn(USER, SESSION, makeEntry(3));
    const loaded = await store.loadHistory(USER, SESSION);
    assert.deepEqual(loaded.messages, [1, 3].flatMap((n) => makeEntry(n).messages));
    assert.match(loaded.warnings[0] ?? "", /corrupt at line 2/);
  });

  it("readTurns skips damage without repairing (memory reads without the lock)", async () => {
    await append(2);
    await truncate(file, (await stat(file)).size - 10);
    const before = await readFile(file);
    assert.deepEqual(await store.readTurns(USER, SESSION), [makeEntry(1)]);
    assert.deepEqual(await readFile(file), before);
    assert.deepEqual(await corruptFiles(), []);
  });

  it("parseHistory ignores blank lines and flags only a final unterminated bad line as torn", () => {
    const good = JSON.stringify(makeEntry(1));
    assert.deepEqual(parseHistory(`${good}\n\n${good}\n`), { entries: [makeEntry(1), makeEntry(1)], badLines: [], tornTail: false });
    assert.deepEqual(parseHistory(`${good}\n{"a`).tornTail, true);
    assert.deepEqual(parseHistory(`{"a\n${good}\n`), { entries: [makeEntry(1)], badLines: [1], tornTail: false });
    // A complete entry without its newline is whole, not torn.
    assert.deepEqual(parseHistory(good), { entries: [makeEntry(1)], badLines: [], tornTail: false });
  });
});
