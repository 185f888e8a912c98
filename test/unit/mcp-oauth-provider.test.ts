import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import type { McpRemoteServerConfig } from "../../src/config/schema.js";
import { McpAuthFiles } from "../../src/store/mcp-auth-files.js";
import { isLoginRequired, LoginRequiredError } from "../../src/tools/mcp/oauth/login-required.js";
import { McpOAuthProvider } from "../../src/tools/mcp/oauth/mcp-oauth-provider.js";
import { captureLogger } from "../helpers/capture-logger.js";

const URL_A = "https://mcp.example.com/mcp";

function remote(overrides: Partial<McpRemoteServerConfig> = {}): McpRemoteServerConfig {
  return { url: URL_A, transport: "http", headers: {}, requires_approval: [], timeout_ms: 60_000, oauth: null, ...overrides };
}

async function store(): Promise<{ files: McpAuthFiles; dataDir: string }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "local-ai-mcp-auth-"));
  return { files: new McpAuthFiles(dataDir), dataDir };
}

describe("McpAuthFiles", () => {
  it("keeps one 0600 file per server in a 0700 folder, replaced atomically; a broken file reads as no login; remove says whether there was one", async () => {
    const { files, dataDir } = await store();
    assert.equal(await files.read("Linear"), undefined);
    await files.write("Linear", { url: URL_A, tokens: { access_token: "a" } });
    const file = files.fileOf("Linear");
    assert.equal(path.dirname(file), path.join(dataDir, "mcp-auth"));
    assert.equal(path.basename(file), "+linear.json", "named as the store names ids");
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal((await stat(path.dirname(file))).mode & 0o777, 0o700);
    await files.write("Linear", { url: URL_A, tokens: { access_token: "b" } });
    assert.deepEqual(await files.read("Linear"), { url: URL_A, tokens: { access_token: "b" } });
    assert.deepEqual(await readdir(path.dirname(file)), ["+linear.json"], "no temp file left");
    await writeFile(file, "{not json");
    assert.equal(await files.read("Linear"), undefined);
    assert.equal(await files.remove("Linear"), true);
    assert.equal(await files.remove("Linear"), false);
  });
});

describe("McpOAuthProvider", () => {
  const { logger } = captureLogger();

  it("without a login front door: no stored client means LoginRequiredError naming the command, and nothing is registered", async () => {
    const { files } = await store();
    const provider = new McpOAuthProvider("linear", remote(), { store: files, logger, refresh: () => Promise.reject(new Error("not expected")) });
    const error = await provider.clientInformation().then(() => undefined, (caught: unknown) => caught);
    assert.ok(error instanceof LoginRequiredError);
    assert.equal(error.message, "MCP server \"linear\" needs a login: run `local-ai mcp login linear`");
    assert.ok(isLoginRequired(new Error("wrapped", { cause: error })));
    assert.equal(provider.needsLogin, true);
    await assert.rejects(Promise.resolve().then(() => provider.redirectToAuthorization(new URL("https://as.example.com/authorize"))), LoginRequiredError);
    assert.equal(await files.read("linear"), undefined);
  });

  it("keeps registration and tokens as given; a record made for another URL is ignored; invalidating tokens keeps the client", async () => {
    const { files } = await store();
    const provider = new McpOAuthProvider("linear", remote(), { store: files, logger, refresh: () => Promise.reject(new Error("not expected")) });
    await provider.saveClientInformation({ client_id: "c1", redirect_uris: ["http://127.0.0.1:5000/callback"] });
    await provider.saveTokens({ access_token: "a1", token_type: "bearer", expires_in: 3600, refresh_token: "r1" });
    assert.equal(provider.needsLogin, false);
    assert.deepEqual(await provider.tokens(), { access_token: "a1", token_type: "bearer", expires_in: 3600, refresh_token: "r1" });
    const moved = new McpOAuthProvider("linear", remote({ url: "https://elsewhere.example.com/mcp" }), { store: files, logger, refresh: () => Promise.reject(new Error("not expected")) });
    assert.equal(await moved.tokens(), undefined, "tokens of another URL are not sent");
    await provider.invalidateCredentials("tokens");
    assert.equal(await provider.tokens(), undefined);
    assert.deepEqual(await provider.clientInformation(), { client_id: "c1", redirect_uris: ["http://127.0.0.1:5000/callback"] });
  });

  it("refreshes a token within a minute of its expiry before handing it out (once, not recursively)", async () => {
    const { files } = await store();
    let refreshes = 0;
    const provider: McpOAuthProvider = new McpOAuthProvider("linear", remote(), {
      store: files,
      logger,
      refresh: async (target) => {
        refreshes++;
        // The SDK's auth() reads the old tokens (refresh token) and saves new ones.
        assert.equal((await target.tokens())?.refresh_token, "r1");
        await target.saveTokens({ access_token: "a2", token_type: "bearer", expires_in: 3600, refresh_token: "r2" });
      },
    });
    await files.write("linear", { url: URL_A, tokens: { access_token: "a1", token_type: "bearer", expires_in: 3600, refresh_token: "r1" }, tokens_saved_at: Date.now() - 3590 * 1000 });
    assert.equal((await provider.tokens())?.access_token, "a2");
    assert.equal(refreshes, 1);
    assert.equal((await provider.tokens())?.access_token, "a2", "a fresh token is not refreshed again");
    assert.equal(refreshes, 1);
    const saved = JSON.parse(await readFile(files.fileOf("linear"), "utf8")) as { tokens_saved_at: number };
    assert.ok(Date.now() - saved.tokens_saved_at < 5000);
  });

  it("uses a configured client id and the first line of its secret file instead of a registration", async () => {
    const { files, dataDir } = await store();
    const secretFile = path.join(dataDir, "secret.txt");
    await writeFile(secretFile, "s3cret\nignored\n");
    const provider = new McpOAuthProvider("linear", remote({ oauth: { client_id: "fixed", client_secret_file: secretFile, scopes: ["read"] } }), { store: files, logger, refresh: () => Promise.resolve() });
    assert.deepEqual(await provider.clientInformation(), { client_id: "fixed", client_secret: "s3cret" });
    assert.equal(provider.clientMetadata.token_endpoint_auth_method, "client_secret_post");
    assert.equal(provider.clientMetadata.scope, "read");
  });
});
