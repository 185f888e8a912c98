/**
 * Child process for the cross-process lock test: takes a session lock through its own
 * FileSessionStore, prints "locked" on stdout, holds the lock for `holdMs`, writes
 * `{start, end}` (ms since epoch, end taken just before release) to `outFile`, then exits.
 * Usage: node store-lock-holder.js <dataDir> <user> <session> <holdMs> <outFile>
 */
import { writeFile } from "node:fs/promises";
import { delay } from "../../src/shared/abort.js";
import { FileSessionStore } from "../../src/store/file-session-store.js";

const [dataDir, user, session, holdMs, outFile] = process.argv.slice(2);
if (dataDir === undefined || user === undefined || session === undefined || holdMs === undefined || outFile === undefined) {
  process.stderr.write("usage: store-lock-holder <dataDir> <user> <session> <holdMs> <outFile>\n");
  process.exit(2);
}

const store = new FileSessionStore(dataDir);
await store.withSessionLock(user, session, async () => {
  const start = Date.now();
  process.stdout.write("locked\n");
  await delay(Number(holdMs));
  const end = Date.now();
  await writeFile(outFile, JSON.stringify({ start, end }));
});
