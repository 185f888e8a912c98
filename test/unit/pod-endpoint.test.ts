// The Pod endpoint per platform (injected): a named pipe derived from the data dir on win32 with a
// token handshake; the POSIX socket file unchanged. The handshake runs over a real Unix socket.
import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtemp } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { awaitHandshake } from "../../src/pod/pod-handshake.js";
import { podEndpoint, podPipeName } from "../../src/pod/pod-endpoint.js";
import { ensurePodToken, handshakeLine, handshakeMatches, readPodToken } from "../../src/pod/pod-token.js";

describe("endpoint", () => {
  it("win32: a pipe named after the data dir (no case, one per dir), the token file under it", () => {
    const dir = "C:\\Users\\Ada\\AppData\\Roaming\\My App\\local-ai";
    const endpoint = podEndpoint({ dataDir: dir, cwd: "C:\\", os: "win32" });
    assert.match(endpoint.path, /^\\\\\.\\pipe\\local-ai-pod-[0-9a-f]{16}$/);
    assert.deepEqual(endpoint, { path: podPipeName(dir), pipe: true, tokenFile: `${dir}\\pod.token` });
    assert.equal(podPipeName(dir.toUpperCase()), podPipeName(dir));
    assert.notEqual(podPipeName(`${dir}2`), podPipeName(dir));
    assert.equal(podEndpoint({ dataDir: dir, socket: "my-pod", cwd: "C:\\", os: "win32" }).path, "\\\\.\\pipe\\my-pod");
    assert.equal(podEndpoint({ dataDir: dir, socket: "\\\\.\\pipe\\x", cwd: "C:\\", os: "win32" }).path, "\\\\.\\pipe\\x");
  });

  it("POSIX: the socket file as before, no token", () => {
    assert.deepEqual(podEndpoint({ dataDir: "/home/ada/.local-ai", cwd: "/tmp", os: "darwin" }), { path: "/home/ada/.local-ai/pod.sock", pipe: false, tokenFile: null });
    assert.deepEqual(podEndpoint({ dataDir: "/d", socket: "p.sock", cwd: "/tmp", os: "linux" }), { path: "/tmp/p.sock", pipe: false, tokenFile: null });
  });
});

describe("token", () => {
  it("is created once (64 hex), read back the same; a handshake line carries exactly it", async () => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), "local-ai-token-")), "pod.token");
    assert.equal(await readPodToken(file), null);
    const token = await ensurePodToken(file);
    assert.match(token, /^[0-9a-f]{64}$/);
    assert.equal(await ensurePodToken(file), token);
    assert.equal(handshakeMatches(handshakeLine(token).trim(), token), true);
    assert.equal(handshakeMatches(handshakeLine(token.replace(/.$/, "x")).trim(), token), false);
    assert.equal(handshakeMatches('{"method":"get_status"}', token), false);
    assert.equal(handshakeMatches("not json", token), false);
  });
});

describe("handshake over a Unix socket", () => {
  const token = "a".repeat(64);

  /** A server that runs awaitHandshake on each connection; resolves the verdict and what came after. */
  async function exchange(send: (client: Socket) => void, timeoutMs = 2000): Promise<{ ok: boolean; after: string }> {
    const socketPath = path.join(await mkdtemp(path.join(tmpdir(), "local-ai-hs-")), "s.sock");
    let resolveVerdict: (verdict: { ok: boolean; after: string }) => void = () => undefined;
    const verdict = new Promise<{ ok: boolean; after: string }>((resolve) => (resolveVerdict = resolve));
    const server = createServer((socket) => {
      void awaitHandshake(socket, token, timeoutMs).then(async (ok) => {
        let after = "";
        if (ok) {
          socket.setEncoding("utf8");
          socket.on("data", (chunk: string) => (after += chunk));
          socket.resume();
          await once(socket, "end");
        }
        socket.destroy();
        server.close();
        resolveVerdict({ ok, after });
      });
    });
    server.listen(socketPath);
    await once(server, "listening");
    const client = connect(socketPath);
    client.on("error", () => undefined);
    await once(client, "connect");
    send(client);
    return verdict;
  }

  it("the right token, with protocol lines in the same packet: admitted, the lines kept", async () => {
    const result = await exchange((client) => client.end(`${handshakeLine(token)}{"method":"get_status"}\n`));
    assert.deepEqual(result, { ok: true, after: '{"method":"get_status"}\n' });
  });

  it("the token split over packets: admitted", async () => {
    const line = handshakeLine(token);
    const result = await exchange((client) => {
      client.write(line.slice(0, 10));
      setImmediate(() => client.end(line.slice(10)));
    });
    assert.deepEqual(result, { ok: true, after: "" });
  });

  it("a protocol line first, a wrong token, silence, an endless line: dropped", async () => {
    assert.equal((await exchange((client) => client.write('{"method":"get_status"}\n'))).ok, false);
    assert.equal((await exchange((client) => client.write(handshakeLine("b".repeat(64))))).ok, false);
    assert.equal((await exchange(() => undefined, 100)).ok, false);
    assert.equal((await exchange((client) => client.write("x".repeat(4096)))).ok, false);
  });
});
