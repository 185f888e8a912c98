/**
 * Child process for the kill-mid-write test: appends turns to one session as fast as it can,
 * until it is killed. Turn n is fully determined by n (store-kill-turns.ts), so the parent can
 * check that every entry it loads afterwards is whole and in order. Entries vary in size up to
 * 257 KiB so that a SIGKILL can land inside a write.
 * Usage: node store-append-loop.js <dataDir> <user> <session>
 */
import { FileSessionStore } from "../../src/store/file-session-store.js";
import { expectedTurn } from "./store-kill-turns.js";

const [dataDir, user, session] = process.argv.slice(2);
if (dataDir === undefined || user === undefined || session === undefined) {
  process.stderr.write("usage: store-append-loop <dataDir> <user> <session>\n");
  process.exit(2);
}

const store = new FileSessionStore(dataDir);
process.stdout.write("ready\n");
for (let n = 0; ; n += 1) await store.appendTurn(user, session, expectedTurn(n));
