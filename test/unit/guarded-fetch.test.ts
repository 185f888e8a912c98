// guardedFetch (redirects followed here, the token to the hub's origin only) and the download
// size checks, against loopback servers.
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { assertFreeSpace, expectedDownloadBytes } from "../../src/models/download-size.js";
import { guardedFetch, MAX_REDIRECTS } from "../../src/models/guarded-fetch.js";
import type { HubAccess } from "../../src/models/hub-access.js";
import { RemoteFile } from "../../src/models/remote-file.js";
import type { RemoteModel } from "../../src/models/remote-gguf.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";

/** A server answering each path from `routes` (a redirect target, or "ok"), recording the headers. */
async function start(routes: Map<string, string>): Promise<{ server: Server; origin: string; seen: Array<{ path: string; headers: IncomingHttpHeaders }> }> {
  const seen: Array<{ path: string; headers: IncomingHttpHeaders }> = [];
  const server = createServer((request, response) => {
    seen.push({ path: request.url ?? "", headers: request.headers });
    const target = routes.get(request.url ?? "");
    if (target === undefined || target === "ok") response.writeHead(target === undefined ? 404 : 200).end("body");
    else response.writeHead(302, { location: target }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe("guardedFetch", () => {
  const hubRoutes = new Map<string, string>();
  const otherRoutes = new Map<string, string>();
  let hub: Awaited<ReturnType<typeof start>>;
  let other: Awaited<ReturnType<typeof start>>;
  let access: HubAccess;

  before(async () => {
    [hub, other] = await Promise.all([start(hubRoutes), start(otherRoutes)]);
    access = { endpoint: `${hub.origin}/`, origin: hub.origin, token: "tok" };
    hubRoutes.set("/same", "/final");
    hubRoutes.set("/final", "ok");
    hubRoutes.set("/away", `${other.origin}/x`);
    otherRoutes.set("/x", `${hub.origin}/final`);
    hubRoutes.set("/loop", "/loop");
    hubRoutes.set("/file", "file:///etc/passwd");
  });
  after(() => {
    hub.server.close();
    other.server.close();
  });

  it("sends the token along redirects on the hub's origin", async () => {
    hub.seen.length = 0;
    const result = await guardedFetch(`${hub.origin}/same`, access);
    assert.equal(result.url, `${hub.origin}/final`);
    assert.equal(result.authorized, true);
    assert.deepEqual(hub.seen.map((request) => request.headers.authorization), ["Bearer tok", "Bearer tok"]);
  });

  it("drops it for good at an origin change, even back on the hub", async () => {
    hub.seen.length = 0;
    other.seen.length = 0;
    const result = await guardedFetch(`${hub.origin}/away`, access);
    assert.equal(result.url, `${hub.origin}/final`);
    assert.equal(result.authorized, false);
    assert.equal(other.seen[0]?.headers.authorization, undefined);
    assert.deepEqual(hub.seen.map((request) => request.headers.authorization), ["Bearer tok", undefined]);
  });

  it("never sends it to another origin first", async () => {
    other.seen.length = 0;
    await guardedFetch(`${other.origin}/x`, access);
    assert.equal(other.seen[0]?.headers.authorization, undefined);
  });

  it("stops after MAX_REDIRECTS and at a redirect that is not http(s)", async () => {
    hub.seen.length = 0;
    await assert.rejects(guardedFetch(`${hub.origin}/loop`, access), /more than 8 redirects/);
    assert.equal(hub.seen.length, MAX_REDIRECTS + 1);
    await assert.rejects(guardedFetch(`${hub.origin}/file`, access), /a redirect to file:/);
  });
});

describe("RemoteFile", () => {
  it("tries a 503 again, and takes only the range from a server that ignores Range and streams without end", async () => {
    let calls = 0;
    let sent = 0;
    const server = createServer((_request, response) => {
      calls += 1;
      if (calls === 1) {
        response.writeHead(503).end();
        return;
      }
      response.writeHead(200, { "content-length": String(100 * 1024 ** 3) });
      const chunk = Buffer.alloc(64 * 1024, 7);
      const pump = (): void => {
        while (!response.destroyed && response.write(chunk)) sent += chunk.length;
      };
      response.on("drain", pump);
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const file = new RemoteFile(`${origin}/m.gguf`, { endpoint: "https://huggingface.co/", origin: "https://huggingface.co", token: "tok" });
      const bytes = await file.read(0, 1000);
      assert.equal(bytes.length, 1000);
      assert.equal(calls, 2);
      assert.equal(file.advertisedBytes, 100 * 1024 ** 3);
      assert.ok(sent < 16 * 1024 * 1024, `${sent} bytes sent`);
      await assert.rejects(file.read(1000, 1000), /ignores ranged requests/);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe("download size checks", () => {
  const remote = (parts: Array<{ advertised?: number; described?: number }>, binaryParts = false): RemoteModel =>
    ({
      ref: "https://host/m.gguf",
      binaryParts,
      parts: parts.map((part, index) => ({ url: `https://host/m${index}`, finalUrl: "", authorized: false, advertisedBytes: part.advertised, describedBytes: part.described })),
    }) as unknown as RemoteModel;

  it("accepts a file within 1 MiB past its header's size and refuses larger or smaller ones", () => {
    assert.equal(expectedDownloadBytes(remote([{ advertised: 1000, described: 990 }])), 990);
    assert.equal(expectedDownloadBytes(remote([{ advertised: 1000, described: 1000 }, { advertised: 50, described: 40 }])), 1040);
    assert.equal(expectedDownloadBytes(remote([{ described: 500 }, { advertised: 300 }], true)), 500, "binary parts: one header for all");
    for (const parts of [[{ advertised: 100 * 1024 ** 3, described: 272_000 }], [{ advertised: 100, described: 200 }]]) {
      assert.throws(() => expectedDownloadBytes(remote(parts)), (error: RuntimeError) => error.code === "model_missing" && error.details?.reason === "size_mismatch");
    }
    assert.equal(expectedDownloadBytes(remote([{}])), undefined);
  });

  it("refuses a download larger than the free space with storage_full", async () => {
    await assert.rejects(assertFreeSpace("/tmp/does/not/exist/yet", Number.MAX_SAFE_INTEGER, "r"), (error: RuntimeError) => {
      assert.equal(error.code, "storage_full");
      assert.equal(error.details?.reason, "no_space");
      assert.match(error.message, /needs \d+\.\d GiB and \/tmp\/does\/not\/exist\/yet has [\d.]+ GiB free/);
      return true;
    });
    await assertFreeSpace("/tmp", 1, "r");
  });
});
