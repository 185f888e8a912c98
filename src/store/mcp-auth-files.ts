import { readFile, unlink } from "node:fs/promises";
import path from "node:path";
import type { McpAuthRecord, McpAuthStore } from "../shared/mcp-auth-record.js";
import { ensurePrivateDir } from "../shared/private-dir.js";
import { storeName } from "../shared/store-name.js";
import { fsyncDir, isNotFound, writeFileAtomic } from "./atomic-file.js";

/**
 * Remote MCP servers' OAuth logins: `<data_dir>/mcp-auth/<server>.json`, one file per server,
 * 0600 in a 0700 folder, replaced atomically (a crash leaves the old login or the new one).
 * A file that cannot be parsed counts as no login: the user logs in again.
 */
export class McpAuthFiles implements McpAuthStore {
  private readonly dir: string;

  constructor(private readonly dataDir: string) {
    this.dir = path.join(dataDir, "mcp-auth");
  }

  fileOf(server: string): string {
    return path.join(this.dir, `${storeName(server)}.json`);
  }

  async read(server: string): Promise<McpAuthRecord | undefined> {
    let text: string;
    try {
      text = await readFile(this.fileOf(server), "utf8");
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    try {
      const record = JSON.parse(text) as unknown;
      return isRecord(record) ? record : undefined;
    } catch {
      return undefined;
    }
  }

  async write(server: string, record: McpAuthRecord): Promise<void> {
    await ensurePrivateDir(this.dir, this.dataDir);
    await writeFileAtomic(this.fileOf(server), `${JSON.stringify(record, null, 2)}\n`);
  }

  async remove(server: string): Promise<boolean> {
    try {
      await unlink(this.fileOf(server));
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
    await fsyncDir(this.dir);
    return true;
  }
}

function isRecord(value: unknown): value is McpAuthRecord {
  return value !== null && typeof value === "object" && typeof (value as { url?: unknown }).url === "string";
}
