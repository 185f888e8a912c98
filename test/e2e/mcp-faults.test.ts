import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { McpToolProvider } from "../../src/tools/mcp/mcp-tool-provider.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { fixtureServer } from "../helpers/mcp-servers.js";

/**
 * Faults of a tool server. A server that floods stderr (one endless line, then a torrent of short
 * ones) must cost us bounded memory: its stderr is split into capped lines and only a short tail
 * is kept. `npm run test:stress` floods 1 GiB instead of 128 MiB.
 */
const FLOOD_MIB = process.env.LOCAL_AI_STRESS === "1" ? 1024 : 128;

describe("MCP server faults", { timeout: 300_000 }, () => {
  it(`a server writing ${FLOOD_MIB} MiB to stderr costs bounded memory and still serves`, async (t) => {
    const { logger } = captureLogger("info");
    const provider = new McpToolProvider({ flood: fixtureServer(["--flood-stderr", String(FLOOD_MIB)], { timeout_ms: 10_000 }) }, { logger });
    global.gc?.();
    const before = process.memoryUsage().rss;
    const started = Date.now();
    try {
      // The fixture serves only after its whole flood was read by us.
      await provider.start();
      const seconds = (Date.now() - started) / 1000;
      assert.equal(provider.status()[0]?.state, "ready", JSON.stringify(provider.status()));
      const result = await provider.call("echo", { message: "still here" }, {});
      assert.equal(result.content, "fixture: still here");
      const grown = (process.memoryUsage().rss - before) / 1024 / 1024;
      t.diagnostic(JSON.stringify({ flood_mib: FLOOD_MIB, seconds, rss_growth_mib: Math.round(grown) }));
      // Unbounded, half the flood (one line) alone would be kept: FLOOD_MIB / 2 or more (64 MiB here).
      assert.ok(grown < Math.max(48, FLOOD_MIB / 4), `RSS grew ${grown.toFixed(0)} MiB reading a ${FLOOD_MIB} MiB flood`);
    } finally {
      await provider.close();
    }
  });
});
