import assert from "node:assert/strict";
import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it } from "node:test";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { startMcpHttpServer, type McpHttpServer } from "../helpers/mcp-http-server.js";
import { TestOAuthProvider } from "../helpers/oauth-test-provider.js";
import { openaiModelYaml, startAgentUpstream, toolResultSent, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { runCli } from "../helpers/run-cli.js";
import { tempConfig } from "../helpers/temp-config.js";

/**
 * OAuth 2.1 for a remote MCP server, end to end: the SDK's server auth (mcpAuthRouter with an
 * in-memory provider: discovery metadata, dynamic registration, authorize, token) guards a
 * Streamable HTTP MCP server (requireBearerAuth). `local-ai mcp login` runs the flow; the test
 * plays the browser by following the printed URL with fetch.
 */

const upstreams: AgentUpstream[] = [];
const servers: McpHttpServer[] = [];
after(async () => {
  await Promise.all([...upstreams.map((u) => u.close()), ...servers.map((s) => s.stop())]);
});

interface StoredLogin {
  url: string;
  client: { client_id: string; redirect_uris: string[] };
  tokens: { access_token: string; refresh_token: string; expires_in: number };
  tokens_saved_at: number;
}

const whoami = (id: string) => ({ call: { id, name: "whoami", arguments: {} } });

function toolDone(proc: CliProcess, id: string): WireMessage | undefined {
  return proc.messages.find((m) => m.id === id && m.event === "tool_done");
}

/** doctor's `mcp.<server>` check. */
async function doctorCheck(configPath: string, dir: string, server: string): Promise<{ status: string; finding: string; fix?: string }> {
  const run = await runCli(["doctor", "--json", "--config", configPath], dir, { timeoutMs: 120_000 });
  const report = JSON.parse(run.stdout) as { checks: Array<{ id: string; status: string; finding: string; fix?: string }> };
  const check = report.checks.find((c) => c.id === `mcp.${server}`);
  assert.ok(check, `mcp.${server} in ${report.checks.map((c) => c.id).join(", ")}`);
  return check;
}

async function listJson(configPath: string, dir: string): Promise<Array<{ name: string; state: string; reason?: string; tools: number }>> {
  const run = await runCli(["mcp", "list", "--json", "--config", configPath], dir, { timeoutMs: 60_000 });
  return (JSON.parse(run.stdout) as { servers: Array<{ name: string; state: string; reason?: string; tools: number }> }).servers;
}

describe("OAuth for a remote MCP server", { timeout: 180_000 }, () => {
  it("needs a login first; `mcp login` completes the flow and stores 0600 tokens; calls succeed; expired tokens are refreshed; `mcp logout` removes them", async () => {
    const oauth = new TestOAuthProvider(3600);
    const server = await startMcpHttpServer({ oauth });
    servers.push(server);
    const upstream = await startAgentUpstream([whoami("w0"), { text: ["no login"] }]);
    upstreams.push(upstream);
    const { dir, configPath } = await tempConfig(`${openaiModelYaml(upstream.baseUrl)}mcp:\n  servers:\n    secure:\n      url: ${server.url}\n`);
    const file = path.join(dir, "data", "mcp-auth", "secure.json");

    // Without a login: a stdio chat's tool call fails and says which command logs in; no browser, no registration.
    const before = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    const refused = await before.request({ id: "n1", method: "chat", params: { input: "who am I?" } }, 60_000);
    assert.equal((refused.result as { response: string }).response, "no login");
    assert.equal(toolDone(before, "n1")?.status, "error");
    assert.match(String(toolResultSent(upstream, "w0")), /MCP server "secure" needs a login: run `local-ai mcp login secure`/);
    before.send({ id: "bye", method: "shutdown" });
    assert.equal((await before.exited).code, 0);
    assert.deepEqual(protocolViolations(before), []);
    assert.deepEqual(oauth.registrations, [], "a front door never registers a client");
    assert.deepEqual((await listJson(configPath, dir)).map((s) => [s.name, s.state, s.reason]), [["secure", "needs_login", 'MCP server "secure" needs a login: run `local-ai mcp login secure`']]);
    const needsLogin = await doctorCheck(configPath, dir, "secure");
    assert.deepEqual([needsLogin.status, needsLogin.finding, needsLogin.fix], ["warn", "needs a login; its tools are not offered and not counted below", "run `local-ai mcp login secure`"]);

    // The login: the URL is printed on a line of its own; the "browser" follows it and the redirect.
    const login = new CliProcess(["mcp", "login", "secure", "--config", configPath], { cwd: dir });
    const printed = await login.waitFor((m) => m.type === "__not_json__" && String(m.line).startsWith("http://127.0.0.1:"), 60_000);
    const authorizationUrl = new URL(String(printed.line));
    assert.equal(authorizationUrl.searchParams.get("code_challenge_method"), "S256");
    assert.equal(authorizationUrl.searchParams.get("resource"), server.url);
    const authorize = await fetch(authorizationUrl, { redirect: "manual" });
    assert.equal(authorize.status, 302);
    const redirect = new URL(authorize.headers.get("location") ?? "");
    assert.equal(redirect.hostname, "127.0.0.1");
    assert.equal(redirect.pathname, "/callback");
    assert.equal((await fetch(redirect)).status, 200);
    const { code } = await login.exited;
    assert.equal(code, 0, login.stderr);
    assert.match(login.stdout, new RegExp(`Logged in to secure; tokens saved in ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    assert.equal(oauth.registrations.length, 1, "registered dynamically");
    assert.equal(oauth.codeExchanges, 1);

    const mode = (await stat(file)).mode & 0o777;
    assert.equal(mode, 0o600);
    const stored = JSON.parse(await readFile(file, "utf8")) as StoredLogin;
    assert.equal(stored.url, server.url);
    assert.equal(stored.client.client_id, oauth.registrations[0]);
    assert.ok(stored.tokens.access_token && stored.tokens.refresh_token, "access and refresh token stored");

    // A call succeeds with the token.
    upstream.push(whoami("w1"), { text: ["logged in"] });
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    const ok = await proc.request({ id: "o1", method: "chat", params: { session_id: "s", input: "who am I?" } }, 60_000);
    assert.equal((ok.result as { response: string }).response, "logged in");
    assert.equal(toolDone(proc, "o1")?.status, "ok");
    assert.equal(toolResultSent(upstream, "w1"), stored.client.client_id);

    // The server stops accepting the access token (it expired there): the SDK refreshes on the 401.
    oauth.expireAccessTokens();
    upstream.push(whoami("w2"), { text: ["refreshed on 401"] });
    const afterExpiry = await proc.request({ id: "o2", method: "chat", params: { session_id: "s", input: "again" } }, 60_000);
    assert.equal((afterExpiry.result as { response: string }).response, "refreshed on 401");
    assert.equal(toolDone(proc, "o2")?.status, "ok");
    assert.equal(oauth.refreshes, 1);
    const refreshed = JSON.parse(await readFile(file, "utf8")) as StoredLogin;
    assert.notEqual(refreshed.tokens.access_token, stored.tokens.access_token);
    assert.equal((await stat(file)).mode & 0o777, 0o600, "still 0600 after an atomic replace");

    // An access token about to expire by its own expires_in is refreshed before it is sent.
    await writeFile(file, JSON.stringify({ ...refreshed, tokens_saved_at: Date.now() - refreshed.tokens.expires_in * 1000 }));
    upstream.push(whoami("w3"), { text: ["refreshed early"] });
    const early = await proc.request({ id: "o3", method: "chat", params: { session_id: "s", input: "and again" } }, 60_000);
    assert.equal(toolDone(proc, "o3")?.status, "ok", JSON.stringify(early));
    assert.equal(oauth.refreshes, 2, "refreshed although the server still took the old token");
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
    assert.doesNotMatch(proc.stderr, new RegExp(refreshed.tokens.access_token), "tokens are never logged");

    assert.deepEqual((await listJson(configPath, dir)).map((s) => [s.name, s.state, s.tools]), [["secure", "connected", 3]]);
    const reachable = await doctorCheck(configPath, dir, "secure");
    assert.deepEqual([reachable.status, reachable.finding], ["ok", `reachable at ${server.url}; listed 3 tools`]);

    // Logout removes the file; the server needs a login again.
    const logout = await runCli(["mcp", "logout", "secure", "--config", configPath], dir);
    assert.equal(logout.code, 0, logout.stderr);
    assert.match(logout.stdout, /Logged out of secure: removed /);
    await assert.rejects(stat(file), { code: "ENOENT" });
    assert.deepEqual((await listJson(configPath, dir)).map((s) => s.state), ["needs_login"]);
    const again = await runCli(["mcp", "logout", "secure", "--config", configPath], dir);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /No stored login for secure/);
  });
});

describe("OAuth login: a redirect with the wrong state (issue 33)", { timeout: 120_000 }, () => {
  it("is answered 400 and ignored; the login keeps waiting and completes with its own redirect", async () => {
    const oauth = new TestOAuthProvider(3600);
    const server = await startMcpHttpServer({ oauth });
    servers.push(server);
    const upstream = await startAgentUpstream([]);
    upstreams.push(upstream);
    const { dir, configPath } = await tempConfig(`${openaiModelYaml(upstream.baseUrl)}mcp:\n  servers:\n    secure:\n      url: ${server.url}\n`);
    const login = new CliProcess(["mcp", "login", "secure", "--config", configPath], { cwd: dir });
    const printed = await login.waitFor((m) => m.type === "__not_json__" && String(m.line).startsWith("http://127.0.0.1:"), 60_000);
    const authorizationUrl = new URL(String(printed.line));
    const callback = new URL(authorizationUrl.searchParams.get("redirect_uri") ?? "");
    assert.equal(callback.hostname, "127.0.0.1");

    // Anyone on this machine can reach the port: a forged code, an error, a redirect without state.
    for (const query of ["code=forged&state=not-this-login", "error=access_denied&state=not-this-login", "code=forged"]) {
      const forged = await fetch(`${callback.href}?${query}`);
      assert.equal(forged.status, 400, query);
      assert.equal(await forged.text(), "<p>This redirect does not belong to the login in progress (its state does not match); it was ignored.</p>");
    }

    // The login still waits: its own redirect, after those, logs it in.
    const authorize = await fetch(authorizationUrl, { redirect: "manual" });
    const redirect = new URL(authorize.headers.get("location") ?? "");
    assert.equal(redirect.searchParams.get("state"), authorizationUrl.searchParams.get("state"));
    assert.equal((await fetch(redirect)).status, 200);
    const { code } = await login.exited;
    assert.equal(code, 0, login.stderr);
    assert.match(login.stdout, /Logged in to secure; tokens saved in /);
    assert.equal(oauth.codeExchanges, 1, "the forged code was never exchanged");
    const ignored = login.stderr.split("\n").filter((line) => line.includes("ignored a redirect whose state does not match the login in progress"));
    assert.equal(ignored.length, 3, login.stderr);
  });
});
