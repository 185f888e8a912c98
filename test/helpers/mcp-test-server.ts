/**
 * A small MCP server built with the official SDK, run over stdio by the tests: it covers what the
 * npm servers cannot show on demand (pagination, names that need sanitizing, a crash, a tool that
 * reports its own cancellation on stderr, huge and binary output, a task-only tool).
 * Usage: node mcp-test-server.js [--fail-start] [--page-size N] [--slow-echo-ms N] [--flood-stderr MB]
 */
import { writeSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";

const argv = process.argv.slice(2);
if (argv.includes("--fail-start")) {
  process.stderr.write("fixture: refusing to start (bad configuration)\n");
  process.exit(2);
}
// `--flood-stderr MB`: writes that much to stderr before serving (half one endless line, half
// short lines), synchronously, so the server is only ready once its reader has drained it all.
const floodIndex = argv.indexOf("--flood-stderr");
if (floodIndex !== -1) {
  const total = Number(argv[floodIndex + 1]) * 1024 * 1024;
  const noNewline = Buffer.alloc(1024 * 1024, 0x61);
  const lines = Buffer.from("flood line\n".repeat(95_000));
  for (let written = 0; written < total; ) {
    const chunk = written < total / 2 ? noNewline : lines;
    written += writeAll(chunk);
  }
}
function writeAll(chunk: Buffer): number {
  for (let offset = 0; offset < chunk.length; ) {
    try {
      offset += writeSync(2, chunk, offset);
    } catch (error) {
      // A non-blocking pipe that is full: try again (the reader drains it).
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
    }
  }
  return chunk.length;
}
const slowEchoIndex = argv.indexOf("--slow-echo-ms");
const slowEchoMs = slowEchoIndex === -1 ? 0 : Number(argv[slowEchoIndex + 1]);
const pageSizeIndex = argv.indexOf("--page-size");
const pageSize = pageSizeIndex === -1 ? 3 : Number(argv[pageSizeIndex + 1]);

const objectSchema = (properties: Record<string, object> = {}): Tool["inputSchema"] => ({ type: "object", properties });

const TOOLS: Tool[] = [
  { name: "echo", description: "Echoes with a prefix", inputSchema: objectSchema({ message: { type: "string" } }) },
  { name: "get.weather", description: "A dotted name", inputSchema: objectSchema() },
  { name: `long_${"x".repeat(70)}`, description: "A name over 64 characters", inputSchema: objectSchema() },
  { name: "wait", description: "Waits ms (default 30000) unless cancelled", inputSchema: objectSchema({ ms: { type: "number" } }) },
  { name: "crash", description: "Exits the process", inputSchema: objectSchema() },
  { name: "big", description: "Returns `bytes` bytes of text", inputSchema: objectSchema({ bytes: { type: "number" } }) },
  { name: "image", description: "Text and an image", inputSchema: objectSchema() },
  { name: "fail", description: "Reports an error", inputSchema: objectSchema() },
  { name: "env", description: "Returns the environment", inputSchema: objectSchema() },
  { name: "structured", description: "Structured content only", inputSchema: objectSchema() },
  { name: "task-only", description: "Needs task execution", inputSchema: objectSchema(), execution: { taskSupport: "required" } },
];

const server = new Server({ name: "fixture", version: "1.0.0" }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, (request) => {
  const start = Number(request.params?.cursor ?? "0");
  const end = start + pageSize;
  return { tools: TOOLS.slice(start, end), ...(end < TOOLS.length ? { nextCursor: String(end) } : {}) };
});

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });

server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
  const args = request.params.arguments ?? {};
  switch (request.params.name) {
    case "echo":
      // `--slow-echo-ms N`: a slow tool, for keep-alive and timeout tests.
      if (slowEchoMs > 0) await new Promise((resolve) => setTimeout(resolve, slowEchoMs));
      return text(`fixture: ${String(args.message)}`);
    case "get.weather":
      return text("sunny");
    case "wait":
      // The test waits for this line (through our logger) before it cancels: the call is running.
      process.stderr.write(`fixture: waiting request ${String(extra.requestId)}\n`);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(text("waited")), typeof args.ms === "number" ? args.ms : 30_000);
        extra.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          // The test reads this through our logger: proof the cancellation reached the server.
          process.stderr.write(`fixture: cancelled request ${String(extra.requestId)}\n`);
          resolve(text("cancelled"));
        });
      });
    case "crash":
      process.stderr.write("fixture: crashing on purpose\n");
      process.exit(3);
      break;
    case "big":
      return text("y".repeat(typeof args.bytes === "number" ? args.bytes : 100_000));
    case "image":
      return { content: [{ type: "text", text: "here:" }, { type: "image", mimeType: "image/png", data: Buffer.alloc(300, 7).toString("base64") }] };
    case "fail":
      return { content: [{ type: "text", text: "it failed on purpose" }], isError: true };
    case "env":
      return text(JSON.stringify(process.env));
    case "structured":
      return { content: [], structuredContent: { answer: 42 } };
    default:
      break;
  }
  return { content: [{ type: "text", text: `no tool ${request.params.name}` }], isError: true };
});

process.stderr.write(`fixture: started pid ${process.pid}\n`);
await server.connect(new StdioServerTransport());
