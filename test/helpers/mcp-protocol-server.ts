/**
 * An MCP server on the SDK's high-level `McpServer`, over stdio, for the protocol features past
 * plain tools: a tool list that changes when a tool is called (`unlock` registers `secret`, and
 * the SDK sends `notifications/tools/list_changed` before `unlock`'s result), and tool results
 * with image, audio, resource link, embedded resource and structured content; a prompt (`review`,
 * a text and an image message), resources (a text file, a PNG, a template), and a tool that
 * reports progress and logs (`count`).
 * Usage: node mcp-protocol-server.js
 */
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

/** The fixture's image: a 4-byte "PNG", so tests can assert the exact data sent. */
const FIXTURE_IMAGE_BASE64 = Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString("base64");

const server = new McpServer({ name: "protocol-fixture", version: "1.0.0" }, { capabilities: { tools: { listChanged: true }, logging: {} } });

let unlocked = false;
server.registerTool("unlock", { description: "Unlocks the secret tool" }, () => {
  if (!unlocked) {
    unlocked = true;
    server.registerTool("secret", { description: "Tells the secret", inputSchema: { who: z.string() } }, ({ who }) => ({ content: [{ type: "text", text: `the secret is 42, ${who}` }] }));
  }
  return { content: [{ type: "text", text: "unlocked" }] };
});

server.registerTool("picture", { description: "A caption and a picture" }, () => ({
  content: [
    { type: "text", text: "a red dot:" },
    { type: "image", mimeType: "image/png", data: FIXTURE_IMAGE_BASE64 },
  ],
}));

server.registerTool("sound", { description: "A sound" }, () => ({ content: [{ type: "audio", mimeType: "audio/wav", data: Buffer.alloc(1000, 1).toString("base64") }] }));

server.registerTool("links", { description: "A link and an embedded file" }, () => ({
  content: [
    { type: "resource_link", uri: "file:///docs/readme.md", name: "readme", mimeType: "text/markdown" },
    { type: "resource", resource: { uri: "file:///docs/notes.txt", mimeType: "text/plain", text: "the notes" } },
  ],
}));

server.registerTool("measure", { description: "Structured only", outputSchema: { size: z.number() } }, () => ({ content: [], structuredContent: { size: 7 } }));

server.registerTool("count", { description: "Counts to 3, reporting progress" }, async (extra) => {
  await server.sendLoggingMessage({ level: "info", logger: "counter", data: "counting to 3" });
  const token = extra._meta?.progressToken;
  // A long tool: its reports come apart from each other and from its result. (The SDK client
  // drops a report that arrives in the same read as the result: it forgets the token first.)
  for (let i = 1; i <= 3; i++) {
    if (token !== undefined) await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: i, total: 3, message: `at ${i}` } });
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  return { content: [{ type: "text", text: "counted" }] };
});

server.registerPrompt("review", { description: "Review a file", argsSchema: { file: z.string().describe("the file to review"), tone: z.string().optional() } }, ({ file, tone }) => ({
  messages: [
    { role: "user", content: { type: "text", text: `Please review ${file}${tone === undefined ? "" : ` in a ${tone} tone`}.` } },
    { role: "user", content: { type: "image", mimeType: "image/png", data: FIXTURE_IMAGE_BASE64 } },
  ],
}));

server.registerResource("notes", "file:///docs/notes.txt", { description: "The notes", mimeType: "text/plain" }, (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "the notes" }] }));
server.registerResource("dot", "file:///docs/dot.png", { mimeType: "image/png" }, (uri) => ({ contents: [{ uri: uri.href, mimeType: "image/png", blob: FIXTURE_IMAGE_BASE64 }] }));
server.registerResource("doc", new ResourceTemplate("file:///docs/{name}.md", { list: undefined }), { description: "A doc by name" }, (uri, { name }) => ({
  contents: [{ uri: uri.href, mimeType: "text/markdown", text: `# ${String(name)}` }],
}));

process.stderr.write(`protocol fixture: started pid ${process.pid}\n`);
await server.connect(new StdioServerTransport());
