import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Ajv2020 } from "ajv/dist/2020.js";
import { agentsYaml } from "../helpers/agents-yaml.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";

/**
 * The package as a user installs it (`npm run test:package`, not part of `npm test`: it takes
 * minutes). `npm pack` (scripts skipped: this tests the current build), `npm install` of the
 * tarball into an empty folder from the npm cache (`--prefer-offline`), and from there: the bin,
 * `doctor --json` checked against the shipped schema, and a chat on the demo model through
 * `local-ai-core/client`, whose import loads nothing of the engine and whose types resolve, and a
 * turn on the demo model through `createPod` from `local-ai-core/pod` (the pod in process).
 * A network failure of the install skips the test loudly; any other failure fails it.
 */
const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const HOOK = new URL("../helpers/module-log-hook.js", import.meta.url).href;
const TSC = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
const NETWORK = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network|fetch failed|socket hang up/i;

interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  files: Array<{ path: string }>;
}

let dir = "";
let app = "";
let pack: PackResult;
let installed: { ok: true } | { ok: false; network: boolean; output: string } = { ok: false, network: false, output: "" };

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

before(async () => {
  for (const built of ["dist/src/cli/main.js", "dist/src/client/index.d.ts", "dist/src/app/create-pod.d.ts", "schema/v1.schema.json"]) {
    assert.ok(existsSync(path.join(ROOT, built)), `${built} is missing: run npm run build first (npm run test:package does)`);
  }
  dir = await mkdtemp(path.join(tmpdir(), "local-ai-package-"));
  const { stdout } = await exec("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  [pack] = JSON.parse(stdout) as [PackResult];
  app = path.join(dir, "app");
  await mkdir(app);
  await writeFile(path.join(app, "package.json"), `${JSON.stringify({ name: "host-app", private: true, type: "module" }, null, 2)}\n`);
  const install = await run("npm", ["install", path.join(dir, pack.filename), "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], app);
  installed = install.code === 0 ? { ok: true } : { ok: false, network: NETWORK.test(install.stderr), output: `${install.stdout}\n${install.stderr}`.slice(-4000) };
});

after(() => (dir === "" ? undefined : rm(dir, { recursive: true, force: true })));

/** Installed, or a loud skip when the registry could not be reached; any other install failure fails. */
function requireInstall(t: { skip(message: string): void }): boolean {
  if (installed.ok) return true;
  if (installed.network) {
    process.stderr.write(`\n*** SKIPPED: npm install of the tarball failed for network reasons; the package was NOT tested.\n${installed.output}\n`);
    t.skip("npm install failed for network reasons (see stderr)");
    return false;
  }
  assert.fail(`npm install of the tarball failed:\n${installed.output}`);
}

describe("the npm package (npm pack, npm install of the tarball)", () => {
  it("holds the build, the types and schema/, and no tests, fixtures, benches or scripts", () => {
    const files = pack.files.map((file) => file.path);
    process.stderr.write(`tarball ${pack.filename}: ${pack.size} bytes packed, ${pack.unpackedSize} unpacked, ${files.length} files\n`);
    for (const needed of ["package.json", "dist/src/cli/main.js", "dist/src/client/index.js", "dist/src/client/index.d.ts", "dist/src/app/create-pod.js", "dist/src/app/create-pod.d.ts", "schema/v1.schema.json", "schema/jsonrpc.schema.json", "schema/pod.schema.json", "schema/cli.schema.json", "config.example.yaml"]) {
      assert.ok(files.includes(needed), `${needed} is in the tarball`);
    }
    const unwanted = files.filter((file) => /^(dist\/)?(test|bench|scripts|examples)\//.test(file) || /fixtures|\.test\.js$|\.map$|\.gguf$/.test(file));
    assert.deepEqual(unwanted, []);
  });

  it("npx local-ai --version and doctor --json run from the installed package", async (t) => {
    if (!requireInstall(t)) return;
    const version = await run("npx", ["--no-install", "local-ai", "--version"], app);
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout.trim(), (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string }).version);
    const doctor = await run("npx", ["--no-install", "local-ai", "doctor", "--json"], app, { LOCAL_AI_CONFIG: "", LOCAL_AI_LOG_LEVEL: "warn" });
    const report = JSON.parse(doctor.stdout) as { ok: boolean; checks: Array<{ id: string; status: string }> };
    assert.ok(report.checks.some((check) => check.id === "node_llama_cpp" && check.status === "ok"), `node-llama-cpp works from the install: ${doctor.stdout.slice(0, 2000)}`);
    // Checked against the schema the package ships.
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
    const schema = JSON.parse(await readFile(path.join(app, "node_modules", "local-ai-core", "schema", "cli.schema.json"), "utf8")) as object;
    const validate = ajv.compile(schema);
    assert.ok(validate(report), ajv.errorsText(validate.errors));
  });

  it("a host chats on the demo model through local-ai-core/client, which loads no engine code", async (t) => {
    if (!requireInstall(t)) return;
    const config = path.join(app, "config.yaml");
    await writeFile(config, `app:\n  data_dir: ./data\n${agentsYaml(await ensureFixture("demo"))}`);
    const host = [
      'import { LocalAiClient } from "local-ai-core/client";',
      "const client = new LocalAiClient({ config: process.argv[2] });",
      "const loaded = process.env.LOCAL_AI_TEST_MODULE_LOG;",
      "const init = await client.start();",
      'const turn = client.chat({ session_id: "pkg", input: "Hello!" });',
      "const names = [];",
      "for await (const event of turn) names.push(event.event);",
      "const result = await turn.result;",
      "await client.close();",
      "process.stdout.write(JSON.stringify({ version: init.server.version, response: result.response, names, pid: client.pid ?? null, loaded: typeof loaded }));",
    ].join("\n");
    await writeFile(path.join(app, "host.mjs"), host);
    const log = path.join(dir, "host-modules.txt");
    const chat = await run(process.execPath, ["--import", HOOK, "host.mjs", config], app, { LOCAL_AI_TEST_MODULE_LOG: log, LOCAL_AI_LOG_LEVEL: "warn" });
    assert.equal(chat.code, 0, chat.stderr);
    const out = JSON.parse(chat.stdout) as { response: string; names: string[] };
    assert.equal(out.response, DEMO_SENTENCE);
    assert.equal(out.names.at(-1), "final");
    // The host process itself (not the child it spawned) loaded only the client.
    const modules = (await readFile(log, "utf8")).split("\n").filter((url) => url.includes("/node_modules/"));
    const heavy = modules.filter((url) => !url.includes("/node_modules/local-ai-core/dist/src/client/") && !url.includes("/node_modules/local-ai-core/dist/src/shared/"));
    assert.ok(modules.some((url) => url.includes("/local-ai-core/dist/src/client/index.js")), "the host imported the installed client");
    assert.deepEqual(heavy, [], "the client pulled in nothing else");
  });

  it("a host runs a turn on the demo model in its own process through local-ai-core/pod", async (t) => {
    if (!requireInstall(t)) return;
    const config = path.join(app, "pod-config.yaml");
    await writeFile(config, `app:\n  data_dir: ./pod-data\n${agentsYaml(await ensureFixture("demo"))}`);
    const host = [
      'import { createPod } from "local-ai-core/pod";',
      'const pod = await createPod({ config: process.argv[2], name: "pkg-pod" });',
      "const events = [];",
      "const idle = new Promise((resolve) => pod.listen((e) => {",
      "  events.push(e);",
      '  if (e.event === "status" && e.data.state === "idle" && events.length > 1) resolve();',
      "}));",
      'pod.run("Hello!");',
      "await idle;",
      "await pod.close();",
      "process.stdout.write(JSON.stringify(events));",
    ].join("\n");
    await writeFile(path.join(app, "pod-host.mjs"), host);
    const turn = await run(process.execPath, ["pod-host.mjs", config], app, { LOCAL_AI_LOG_LEVEL: "warn" });
    assert.equal(turn.code, 0, turn.stderr);
    // stdout holds only what the host wrote: the pod itself never writes there.
    const events = JSON.parse(turn.stdout) as Array<{ event: string; data: Record<string, unknown> }>;
    const names = events.map((e) => e.event).filter((name, i, all) => !(name === "text_delta" && all[i - 1] === "text_delta"));
    assert.deepEqual(names, ["status", "turn_start", "text_delta", "usage", "text_done", "turn_end", "status"]);
    assert.deepEqual(events.find((e) => e.event === "text_done")?.data, { text: DEMO_SENTENCE });
    assert.deepEqual(events.at(-1)?.data, { state: "idle", session_id: events[0]?.data.session_id, pod_name: "pkg-pod" });
  });

  it("its types resolve from the installed package (exports with types)", async (t) => {
    if (!requireInstall(t)) return;
    await writeFile(
      path.join(app, "check.ts"),
      [
        'import { LocalAiClient, LocalAiError, type ChatEvent, type ChatResult } from "local-ai-core/client";',
        "const client = new LocalAiClient({ restart: { maxRestarts: 1 } });",
        'const turn = client.chat({ input: "hi", session_id: "s" });',
        "export async function main(): Promise<ChatResult> {",
        "  for await (const event of turn) {",
        '    const e: ChatEvent = event;',
        '    if (e.event === "llm_chunk") e.delta.toUpperCase();',
        "  }",
        "  return turn.result;",
        "}",
        'export const isCancel = (error: unknown): boolean => error instanceof LocalAiError && error.code === "cancelled";',
        "// @ts-expect-error an unknown param is a compile error",
        'client.chat({ input: "x", sesion_id: "typo" });',
        'import { createPod, isRuntimeError, type Pod, type PodEvent, type PodMethodMessage } from "local-ai-core/pod";',
        "export async function podTurn(): Promise<Pod> {",
        '  const pod = await createPod({ config: "config.yaml", name: "typed" });',
        '  pod.listen((e: PodEvent) => { if (e.event === "text_delta") e.data.text.toUpperCase(); });',
        '  const message: PodMethodMessage = { method: "run", params: { input: "hi" } };',
        "  pod.send(message);",
        "  // @ts-expect-error run needs params.input",
        '  pod.send({ method: "run" });',
        "  return pod;",
        "}",
        "export const isPodError = (error: unknown): boolean => isRuntimeError(error) && error.code === \"config_invalid\";",
      ].join("\n"),
    );
    const tsconfig = {
      compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", strict: true, noEmit: true, skipLibCheck: true, typeRoots: [path.join(ROOT, "node_modules", "@types")], types: ["node"] },
      files: ["check.ts"],
    };
    await writeFile(path.join(app, "tsconfig.json"), JSON.stringify(tsconfig));
    const check = await run(process.execPath, [TSC, "-p", "tsconfig.json"], app);
    assert.equal(check.code, 0, `${check.stdout}${check.stderr}`);
  });
});
