import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DEMO_SENTENCE, ensureFixture } from "../test/fixtures/gguf/index.js";

/**
 * `npm run demo`: the main job. Generates the deterministic demo GGUF (no download: the weights
 * are built so greedy output is a known sentence), starts `local-ai serve-stdio` on the embedded
 * engine the way a host app does, and prints the NDJSON exchange (`>` requests, `<` protocol
 * lines). Logs of the server go to stderr.
 */
const cli = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const dir = await mkdtemp(path.join(tmpdir(), "local-ai-demo-"));
const configPath = path.join(dir, "config.yaml");
const modelPath = await ensureFixture("demo");
await writeFile(
  configPath,
  [
    "app:",
    "  data_dir: ./data",
    "  log_level: warn",
    "llama:",
    "  models:",
    "    default:",
    "      engine: embedded",
    `      path: ${JSON.stringify(modelPath)}`,
    "      threads: 1",
    "      ctx_size: 2048",
    "agents:",
    "  assistant:",
    "    temperature: 0",
    "",
  ].join("\n"),
);

const requests = [
  { id: "init-1", method: "initialize", params: { protocol_versions: [1], client: { name: "demo", version: "1" } } },
  { id: 1, method: "ping", params: {} },
  { id: "chat-1", method: "chat", params: { session_id: "demo", input: "Hello! Who are you?" } },
];

const child = spawn(process.execPath, [cli, "serve-stdio", "--config", configPath], { stdio: ["pipe", "pipe", "inherit"] });
let buffer = "";
let answered: (response: string) => void = () => undefined;
const chatDone = new Promise<string>((resolve) => (answered = resolve));
child.stdout.setEncoding("utf8");
child.stdout.on("data", (chunk: string) => {
  buffer += chunk;
  const lines = buffer.split("\n");
  buffer = lines.pop() ?? "";
  for (const line of lines) {
    process.stdout.write(`< ${line.length > 400 ? `${line.slice(0, 400)}...` : line}\n`);
    const message = JSON.parse(line) as { id?: unknown; type?: string; result?: { response?: string }; code?: string };
    if (message.id === "chat-1" && message.type === "result") answered(message.result?.response ?? "");
    if (message.id === "chat-1" && message.type === "error") answered(`error ${message.code ?? ""}`);
  }
});
for (const request of requests) {
  const line = JSON.stringify(request);
  process.stdout.write(`> ${line}\n`);
  child.stdin.write(`${line}\n`);
}
const timeout = setTimeout(() => answered("(timed out)"), 60_000);
const response = await chatDone;
clearTimeout(timeout);
const bye = JSON.stringify({ id: "bye", method: "shutdown" });
process.stdout.write(`> ${bye}\n`);
child.stdin.write(`${bye}\n`);
const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
process.stdout.write(`serve-stdio exited with code ${code}\n`);
const ok = code === 0 && response === DEMO_SENTENCE;
process.stdout.write(ok ? `demo ok: the model answered "${response}"\n` : `demo FAILED: expected "${DEMO_SENTENCE}", got "${response}"\n`);
process.exitCode = ok ? 0 : 1;
