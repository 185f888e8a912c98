// ACP: a config MCP server that needs an OAuth login (the SDK's server auth guarding a Streamable
// HTTP MCP server, as in mcp-oauth.test.ts). The first prompt shows the editor the authorization
// URL as an agent message and waits for the loopback redirect in the background; the test plays
// the browser; once logged in, the next prompt's call to the server's tool succeeds with the token
// (and the server no longer counts as needing a login).
import assert from "node:assert/strict";
import { mkdtemp, realpath, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { AcpEditor, toolUpdates } from "../helpers/acp-editor.js";
import { startMcpHttpServer, type McpHttpServer } from "../helpers/mcp-http-server.js";
import { TestOAuthProvider } from "../helpers/oauth-test-provider.js";
import { openaiModelYaml, startAgentUpstream, toolResultSent, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";

let upstream: AgentUpstream | undefined;
let server: McpHttpServer | undefined;
let editor: AcpEditor | undefined;
after(async () => {
  if (editor !== undefined && editor.child.exitCode === null) editor.child.kill("SIGKILL");
  await upstream?.close();
  await server?.stop();
});

describe("ACP: logging in to a config MCP server", { timeout: 120_000 }, () => {
  it("sends the authorization URL to the editor, completes the login on the redirect, and the next prompt's call succeeds", async () => {
    const oauth = new TestOAuthProvider(3600);
    server = await startMcpHttpServer({ oauth });
    upstream = await startAgentUpstream([{ text: ["hello"] }]);
    const { dir, configPath } = await tempConfig(`${openaiModelYaml(upstream.baseUrl, ["    memory: false"])}mcp:\n  servers:\n    secure:\n      url: ${server.url}\n`);
    editor = new AcpEditor(["--config", configPath], { cwd: dir });
    await editor.initialize();
    const cwd = await realpath(await mkdtemp(path.join(tmpdir(), "local-ai-acp-ws-")));
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd, mcpServers: [] });

    const first = await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] });
    assert.equal(first.stopReason, "end_turn");
    const urlLine = () => editor?.text(sessionId).split("\n").find((line) => line.startsWith("http://127.0.0.1:"));
    await editor.waitFor(() => urlLine() !== undefined, "the authorization URL");
    assert.match(editor.text(sessionId), /MCP server "secure" needs a login\. To authorize local-ai, open this URL in a browser:\n\nhttp:\/\/127\.0\.0\.1:\d+\/authorize\?[^\n]+\n\n\(Or run `local-ai mcp login secure` in a terminal\.\)/);
    assert.deepEqual(oauth.registrations.length, 1, "registered for the loopback redirect");

    // The browser: the authorization server redirects to the agent's loopback listener.
    const authorizationUrl = new URL(urlLine() as string);
    assert.equal(authorizationUrl.searchParams.get("code_challenge_method"), "S256");
    const authorize = await fetch(authorizationUrl, { redirect: "manual" });
    assert.equal(authorize.status, 302);
    const redirect = new URL(authorize.headers.get("location") ?? "");
    assert.equal(redirect.hostname, "127.0.0.1");
    assert.equal((await fetch(redirect)).status, 200);
    await editor.waitFor(() => editor?.text(sessionId).includes('Logged in to MCP server "secure"') === true, "the login's confirmation");
    assert.equal(oauth.codeExchanges, 1);
    assert.equal((await stat(path.join(dir, "data", "mcp-auth", "secure.json"))).mode & 0o777, 0o600);

    upstream.push({ call: { id: "w1", name: "whoami", arguments: {} } }, { call: { id: "n1", name: "nope", arguments: {} } }, { text: ["logged in"] });
    const second = await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "who am I?" }] });
    assert.equal(second.stopReason, "end_turn");
    assert.equal(toolResultSent(upstream, "w1"), oauth.registrations[0]);
    assert.equal(toolUpdates(editor, sessionId, "w1").at(-1)?.status, "completed");
    // The server counts as logged in now: an unknown tool's error no longer says to log in to it.
    assert.match(String(toolResultSent(upstream, "n1")), /there is no tool named "nope"/);
    assert.doesNotMatch(String(toolResultSent(upstream, "n1")), /needs a login/);
    assert.equal((await editor.close()).code, 0, editor.stderr);
    assert.deepEqual(editor.stdoutViolations(), []);
  });
});
