import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * `npm run demo`: starts `local-ai serve-stdio` the way a host app does and prints the NDJSON
 * exchange (`>` requests, `<` protocol lines). Logs of the server go to stderr.
 */
const cli = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const dir = await mkdtemp(path.join(tmpdir(), "local-ai-demo-"));
const configPath = path.join(dir, "config.yaml");
await writeFile(configPath, "app:\n  data_dir: ./data\n  log_level: warn\n");

const requests = [
  { id: "init-1", method: "initialize", params: { protocol_versions: [1], client: { name: "demo", version: "1" } } },
  { id: 1, method: "ping", params: {} },
  { id: 2, method: "doctor", params: {} },
  { id: "bad", method: "no_such_method" },
  { id: "bye", method: "shutdown" },
];

const child = spawn(process.execPath, [cli, "serve-stdio", "--config", configPath], { stdio: ["pipe", "pipe", "inherit"] });
let buffer = "";
child.stdout.setEncoding("utf8");
child.stdout.on("data", (chunk: string) => {
  buffer += chunk;
  const lines = buffer.split("\n");
  buffer = lines.pop() ?? "";
  for (const line of lines) process.stdout.write(`< ${line.length > 400 ? `${line.slice(0, 400)}...` : line}\n`);
});
for (const request of requests) {
  const line = JSON.stringify(request);
  process.stdout.write(`> ${line}\n`);
  child.stdin.write(`${line}\n`);
}
const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
process.stdout.write(`serve-stdio exited with code ${code}\n`);
process.exitCode = code ?? 1;
