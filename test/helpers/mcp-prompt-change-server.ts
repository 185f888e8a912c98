/**
 * An MCP server (the SDK's McpServer, stdio) whose prompt list changes on a signal from the test,
 * not from a call: it starts with the prompt `first` (and a tool, `noop`); on SIGUSR1 it registers `second`, and the
 * SDK sends `notifications/prompts/list_changed`. So a client that updates on the notification
 * can be told apart from one that lists the prompts again after its own requests.
 * Usage: node mcp-prompt-change-server.js <pid file> (the pid, for the test's signal).
 */
import { writeFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const pidFile = process.argv[2];
if (pidFile === undefined) throw new Error("usage: mcp-prompt-change-server <pid file>");

const server = new McpServer({ name: "prompt-change-fixture", version: "1.0.0" }, { capabilities: { prompts: { listChanged: true } } });
// A tool too: local-ai lists a server's tools when it starts.
server.registerTool("noop", { description: "Does nothing" }, () => ({ content: [{ type: "text", text: "ok" }] }));
server.registerPrompt("first", { description: "The first prompt" }, () => ({ messages: [{ role: "user", content: { type: "text", text: "first" } }] }));
process.on("SIGUSR1", () => {
  server.registerPrompt("second", { description: "Added later" }, () => ({ messages: [{ role: "user", content: { type: "text", text: "second" } }] }));
});

await server.connect(new StdioServerTransport());
writeFileSync(pidFile, String(process.pid));
