/**
 * An MCP server (the SDK's McpServer, over stdio) whose `ask` tool asks the user a form-mode
 * question (`elicitation/create`) and returns what it got: `action` and the content as JSON.
 * Usage: node mcp-elicit-server.js
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "elicit-fixture", version: "1.0.0" });

/** The question `ask` sends; tests compare the wire's `requested_schema` with it. */
const NAME_SCHEMA = {
  type: "object" as const,
  properties: { name: { type: "string" as const, title: "Your name" }, age: { type: "number" as const } },
  required: ["name"],
};

server.registerTool("ask", { description: "Asks the user for their name" }, async () => {
  const answer = await server.server.elicitInput({ message: "What is your name?", requestedSchema: NAME_SCHEMA });
  return { content: [{ type: "text", text: `answer: ${answer.action} ${JSON.stringify(answer.content ?? null)}` }] };
});

await server.connect(new StdioServerTransport());
