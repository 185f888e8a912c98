import type { Logger } from "../logging/create-logger.js";
import { FileSessionCatalog } from "./file-session-catalog.js";
import { FileSessionStore } from "./file-session-store.js";
import { MinisearchMemoryIndex } from "./memory-index.js";
import type { HistoryReader, MemoryIndex, SessionCatalog, SessionStore } from "./store-types.js";

export interface Store {
  /** The sessions, and lock-free reads of their finished turns. */
  sessions: SessionStore & HistoryReader;
  memory: MemoryIndex;
  /** What front doors record about sessions besides turns (ACP: cwd, title). */
  catalog: SessionCatalog;
}

/**
 * The store as the composition root wires it: sessions on disk under `dataDir` (app.data_dir),
 * memory indexed from those same sessions plus `dataDir/memory/<user>/*.md`. Nothing is touched
 * on disk until the first call (folders are created on first write).
 */
export function createStore(dataDir: string, logger?: Logger): Store {
  const sessions = new FileSessionStore(dataDir, logger ? { logger } : {});
  const memory = new MinisearchMemoryIndex(dataDir, sessions, logger ? { logger } : {});
  const catalog = new FileSessionCatalog(dataDir, sessions, logger);
  return { sessions, memory, catalog };
}
