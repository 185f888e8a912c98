import { appendFileSync } from "node:fs";
import { agentHarness } from "./agent-harness.js";
import { ScriptedToolProvider } from "./mcp-scripted-tools.js";
import { ScriptedEngine } from "./scripted-engine.js";

/**
 * Runs one turn whose first step calls `fast` then `slow`; each tool run is appended to the
 * marker file. The parent test SIGKILLs this process while `slow` runs.
 */
const [dataDir, marker] = process.argv.slice(2) as [string, string];
const schema = { type: "object", properties: {} };
const engine = new ScriptedEngine([
  [
    { type: "tool_call", index: 0, call: { id: "call_fast", name: "fast", arguments: "{}" } },
    { type: "tool_call", index: 1, call: { id: "call_slow", name: "slow", arguments: "{}" } },
    { type: "end", finishReason: "tool_calls" },
  ],
]);
const tools = new ScriptedToolProvider([
  { name: "fast", inputSchema: schema, replies: () => (appendFileSync(marker, "fast\n"), { content: "fast done" }) },
  // stdout tells the parent the moment `slow` runs (the marker file is what it checks after).
  { name: "slow", inputSchema: schema, replies: () => (appendFileSync(marker, "slow-start\n"), process.stdout.write("slow-start\n"), { content: "never", delayMs: 60_000 }) },
]);
const harness = await agentHarness(engine, tools, "", dataDir);
await harness.turn({ session_id: "crash", input: "run both" });
