// serve-stdio --protocol acp through the official SDK's client side: the editor's file and
// terminal tools never reach outside the session's cwd, through a symlink whose target does not
// exist yet either (an editor that follows the link would create the file outside), and a call
// that would be refused is refused before the user is asked to approve it (issue 27, items 3, 5).
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { link, mkdir, mkdtemp, readdir, readFile, realpath, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { AcpEditor, choose, statusTrail, toolUpdates } from "../helpers/acp-editor.js";
import { openaiModelYaml, startAgentUpstream, toolResultSent, type AgentUpstream, type UpstreamStep } from "../helpers/openai-agent-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";

const upstreams: AgentUpstream[] = [];
after(async () => {
  await Promise.all(upstreams.map((u) => u.close()));
});

/** A workspace `ws` next to an `outside` folder (holding `secret.txt`), both real paths. */
async function workspaceWithOutside(): Promise<{ ws: string; outside: string }> {
  const root = await realpath(await mkdtemp(path.join(tmpdir(), "local-ai-acp-escape-")));
  const ws = path.join(root, "ws");
  const outside = path.join(root, "outside");
  await mkdir(ws);
  await mkdir(outside);
  await writeFile(path.join(outside, "secret.txt"), "secret");
  return { ws, outside };
}

/** An editor on a scripted model; the session is opened in `ws` with fs and terminal advertised. */
async function editorSession(steps: UpstreamStep[], ws: string, buffers: Record<string, string> = {}): Promise<{ editor: AcpEditor; upstream: AgentUpstream; sessionId: string }> {
  const upstream = await startAgentUpstream(steps);
  upstreams.push(upstream);
  const { dir, configPath } = await tempConfig(openaiModelYaml(upstream.baseUrl));
  const editor = new AcpEditor(["--config", configPath], { cwd: dir });
  await editor.initialize();
  const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
  // Every question is allowed: only the agent's own check stands between the model and the disk.
  editor.permissionPolicy = () => choose("allow_once");
  editor.writeThrough = true;
  for (const [file, content] of Object.entries(buffers)) editor.buffers.set(path.join(ws, file), content);
  const response = await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] });
  assert.equal(response.stopReason, "end_turn");
  return { editor, upstream, sessionId };
}

async function finish(editor: AcpEditor): Promise<void> {
  assert.equal((await editor.close()).code, 0, editor.stderr);
  assert.deepEqual(editor.stdoutViolations(), []);
}

const call = (id: string, name: string, args: Record<string, unknown>): UpstreamStep => ({ call: { id, name, arguments: args } });

describe("ACP: symlinks do not lead the editor's tools out of the workspace", () => {
  it("refuses a write through a dangling file link and a dangling directory link, a read through a link out, a terminal cwd through a link out", async () => {
    const { ws, outside } = await workspaceWithOutside();
    await symlink(path.join(outside, "new.txt"), path.join(ws, "dl"));
    await symlink(path.join(outside, "newdir"), path.join(ws, "dldir"));
    await symlink("../outside/secret.txt", path.join(ws, "secret-link"));
    await symlink(outside, path.join(ws, "outdir"));
    await symlink("sub/later.txt", path.join(ws, "inside-link"));
    await mkdir(path.join(ws, "sub"));
    const { editor, upstream, sessionId } = await editorSession(
      [
        call("w1", "write_text_file", { path: "dl", content: "pwned" }),
        call("w2", "write_text_file", { path: "dldir/x.txt", content: "pwned" }),
        call("r1", "read_text_file", { path: "secret-link" }),
        call("t1", "run_command", { command: process.execPath, args: ["-e", "require('fs').writeFileSync('pwned.txt', 'x')"], cwd: "outdir" }),
        call("ok", "write_text_file", { path: "inside-link", content: "fine" }),
        { text: ["done"] },
      ],
      ws,
    );

    const refusal = (param: string, given: string): string => `Error (error): ${param} ${JSON.stringify(given)} is outside the session's working directory ${ws}`;
    assert.equal(toolResultSent(upstream, "w1"), refusal("path", "dl"));
    assert.equal(toolResultSent(upstream, "w2"), refusal("path", "dldir/x.txt"));
    assert.equal(toolResultSent(upstream, "r1"), refusal("path", "secret-link"));
    assert.equal(toolResultSent(upstream, "t1"), refusal("cwd", "outdir"));
    for (const id of ["w1", "w2", "r1", "t1"]) assert.deepEqual(statusTrail(toolUpdates(editor, sessionId, id)), ["tool_call:failed"], id);

    // Only the link that stays inside was written, after asking; nothing reached the editor otherwise.
    assert.deepEqual(editor.writes, [{ sessionId, path: path.join(ws, "inside-link"), content: "fine" }]);
    assert.deepEqual(editor.reads, []);
    assert.deepEqual(editor.terminals.created, []);
    assert.deepEqual(editor.permissions.map((p) => p.request.toolCall.toolCallId), ["ok"]);
    assert.deepEqual((await readdir(outside)).sort(), ["secret.txt"], "nothing was created outside the workspace");
    assert.equal(existsSync(path.join(ws, "sub", "later.txt")), true, "the inside link was followed by the editor");
    await finish(editor);
  });
});

describe("ACP: a hard-linked file is neither read nor written (issue 33, item 4)", () => {
  it("refuses a read and a write of a hard link to a file outside, and of a file with two names inside, without asking", async () => {
    const { ws, outside } = await workspaceWithOutside();
    await link(path.join(outside, "secret.txt"), path.join(ws, "hl"));
    await writeFile(path.join(ws, "a.txt"), "mine");
    await link(path.join(ws, "a.txt"), path.join(ws, "b.txt"));
    await writeFile(path.join(ws, "plain.txt"), "plain");
    const { editor, upstream, sessionId } = await editorSession(
      [
        call("r1", "read_text_file", { path: "hl" }),
        call("w1", "write_text_file", { path: "hl", content: "pwned" }),
        call("r2", "read_text_file", { path: "a.txt" }),
        call("w2", "write_text_file", { path: "b.txt", content: "changed" }),
        call("ok", "read_text_file", { path: "plain.txt" }),
        { text: ["done"] },
      ],
      ws,
      // The editor answers reads from the files as they are on disk.
      { hl: "secret", "a.txt": "mine", "b.txt": "mine", "plain.txt": "plain" },
    );
    const refusal = (given: string): string =>
      `Error (error): path ${JSON.stringify(given)} is a file with 2 hard links (more than one link): its other names may lie outside the session's working directory ${ws}, so it is not read or written`;
    for (const [id, given] of [["r1", "hl"], ["w1", "hl"], ["r2", "a.txt"], ["w2", "b.txt"]] as const) {
      assert.equal(toolResultSent(upstream, id), refusal(given), id);
      assert.deepEqual(statusTrail(toolUpdates(editor, sessionId, id)), ["tool_call:failed"], id);
    }
    assert.deepEqual(editor.permissions, [], "no permission question for a hard-linked file");
    assert.deepEqual(editor.writes, []);
    assert.deepEqual(editor.reads.map((read) => read.path), [path.join(ws, "plain.txt")], "only the file with one link reached the editor");
    assert.equal(toolResultSent(upstream, "ok"), "plain");
    assert.equal(await readFile(path.join(outside, "secret.txt"), "utf8"), "secret", "the outside file is unchanged");
    assert.equal(await readFile(path.join(ws, "a.txt"), "utf8"), "mine");
    assert.equal(editor.text(sessionId), "done");
    await finish(editor);
  });
});

describe("ACP: a refused path is never put to the user", () => {
  it("answers `../pwned.txt` and `run_command cwd: /` with the refusal and sends no session/request_permission", async () => {
    const { ws, outside } = await workspaceWithOutside();
    const { editor, upstream, sessionId } = await editorSession(
      [
        call("p1", "write_text_file", { path: "../outside/pwned.txt", content: "pwned" }),
        call("p2", "run_command", { command: process.execPath, args: ["-e", "0"], cwd: "/" }),
        call("p3", "write_text_file", { path: "/etc/local-ai-pwned", content: "pwned" }),
        { text: ["done"] },
      ],
      ws,
    );
    assert.equal(toolResultSent(upstream, "p1"), `Error (error): path "../outside/pwned.txt" is outside the session's working directory ${ws}`);
    assert.equal(toolResultSent(upstream, "p2"), `Error (error): cwd "/" is outside the session's working directory ${ws}`);
    assert.equal(toolResultSent(upstream, "p3"), `Error (error): path "/etc/local-ai-pwned" is outside the session's working directory ${ws}`);
    assert.equal(editor.permissions.length, 0, "no permission question for a call that cannot run");
    for (const id of ["p1", "p2", "p3"]) assert.deepEqual(statusTrail(toolUpdates(editor, sessionId, id)), ["tool_call:failed"], id);
    assert.deepEqual([editor.writes, editor.terminals.created], [[], []]);
    assert.deepEqual(await readdir(outside), ["secret.txt"]);
    assert.equal(editor.text(sessionId), "done");
    await finish(editor);
  });
});
