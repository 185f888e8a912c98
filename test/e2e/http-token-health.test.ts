// serve-http's bearer token from the environment or a file (never needed on the command line),
// and /health that shows no file paths to a caller without the token (built CLI, demo model).
import assert from "node:assert/strict";
import { chmod, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { CliProcess } from "../helpers/cli-process.js";
import { agentsYaml, freePort, startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { tempConfig } from "../helpers/temp-config.js";
import { ensureFixture } from "../fixtures/gguf/index.js";

let demo = "";
let tokenDir = "";
const servers: HttpServer[] = [];

before(async () => {
  demo = await ensureFixture("demo");
  tokenDir = await mkdtemp(path.join(tmpdir(), "local-ai-token-"));
});

after(async () => {
  await Promise.all(servers.map((server) => server.stop()));
});

const status = async (server: HttpServer, token?: string): Promise<number> =>
  (await fetch(`${server.base}/v1/models`, { headers: token === undefined ? {} : { Authorization: `Bearer ${token}` } })).status;

describe("serve-http bearer token sources and /health privacy (built CLI)", () => {
  it("$LOCAL_AI_TOKEN protects /v1/*; /health shows the model path only to a caller with the token", async () => {
    const server = await startHttpServer(agentsYaml(demo), [], { LOCAL_AI_TOKEN: "env-secret-1" });
    servers.push(server);
    assert.equal(await status(server), 401);
    assert.equal(await status(server, "wrong"), 401);
    assert.equal(await status(server, "env-secret-1"), 200);
    const open = await (await fetch(`${server.base}/health`)).text();
    assert.ok(!open.includes(demo) && !open.includes(server.dir), `no file paths without the token: ${open}`);
    assert.match(open, /"status":"ok"/);
    const full = await (await fetch(`${server.base}/health`, { headers: { Authorization: "Bearer env-secret-1" } })).text();
    assert.ok(full.includes(demo), `the token holder sees the details: ${full}`);
  });

  it("--bearer-token-file reads the token (mode 600); a file others can read is refused at startup", async () => {
    const file = path.join(tokenDir, "token");
    await writeFile(file, "file-secret-2\n");
    await chmod(file, 0o600);
    const server = await startHttpServer(agentsYaml(demo), ["--bearer-token-file", file]);
    servers.push(server);
    assert.equal(await status(server), 401);
    assert.equal(await status(server, "file-secret-2"), 200);

    await chmod(file, 0o644);
    const { dir, configPath } = await tempConfig(agentsYaml(demo));
    const refused = new CliProcess(["serve-http", "--config", configPath, "--port", String(await freePort()), "--bearer-token-file", file], { cwd: dir });
    assert.equal((await refused.exited).code, 1);
    assert.match(refused.stderr, /--bearer-token-file .*token is readable by other users \(mode 644\); chmod 600 it/);
  });
});
