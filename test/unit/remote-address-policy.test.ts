// Where a request's MCP server may be (security issue 33, point 3): the non-public ranges in every
// spelling, http.request_mcp_allowed_hosts entries, a name refused when ANY of its addresses is,
// and the fetch that connects to the checked addresses only (a name the real DNS does not know
// reaches the loopback server the injected lookup checked: nothing resolved it again).
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { parseAllowedHost } from "../../src/config/allowed-host.js";
import { configSchema } from "../../src/config/schema.js";
import { pinnedFetch } from "../../src/tools/mcp/pinned-fetch.js";
import { AddressRefused, RemoteAddressPolicy, type HostLookup } from "../../src/tools/mcp/remote-address-policy.js";
import { SpecialAddresses } from "../../src/tools/mcp/special-addresses.js";

const REFUSAL = "an MCP server a request names may not be on a loopback, link-local or private address unless http.request_mcp_allowed_hosts lists its host";

/** A lookup that knows only the names given (what the resolver would answer). */
const fakeDns =
  (names: Record<string, string[]>): HostLookup =>
  async (hostname) => {
    const addresses = names[hostname];
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };

describe("special addresses", () => {
  const special = new SpecialAddresses();
  it("classifies IPv4 ranges, IPv6 ranges and IPv6 forms that carry an IPv4 address", () => {
    const cases: Array<[string, string | null]> = [
      ["127.0.0.1", "loopback"],
      ["127.255.255.254", "loopback"],
      ["10.1.2.3", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["172.32.0.1", null],
      ["192.168.1.1", "private"],
      ["169.254.169.254", "link-local"],
      ["100.64.0.1", "carrier-grade NAT"],
      ["100.128.0.1", null],
      ["0.0.0.0", "unspecified"],
      ["224.0.0.1", "multicast"],
      ["255.255.255.255", "reserved"],
      ["8.8.8.8", null],
      ["::", "unspecified"],
      ["::1", "loopback"],
      ["[::1]", "loopback"],
      ["fe80::1", "link-local"],
      ["fe80::1%eth0", "link-local"],
      ["febf::1", "link-local"],
      ["fc00::1", "private"],
      ["fd12:3456::1", "private"],
      ["ff02::1", "multicast"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:7f00:1", "loopback"],
      ["::ffff:a9fe:a9fe", "link-local"],
      ["::7f00:1", "loopback"],
      ["::ffff:0:a00:1", "private"],
      ["64:ff9b::a00:1", "private"],
      ["2002:7f00:1::", "loopback"],
      ["::ffff:8.8.8.8", null],
      ["2001:4860:4860::8888", null],
      ["example.com", null],
    ];
    assert.deepEqual(
      cases.map(([address]) => [address, special.kind(address)]),
      cases,
    );
  });
});

describe("http.request_mcp_allowed_hosts entries", () => {
  it("parse to a host as a URL spells it and an optional port; anything else is a config error naming the entry", () => {
    assert.deepEqual(parseAllowedHost("127.0.0.1"), { host: "127.0.0.1", port: null });
    assert.deepEqual(parseAllowedHost("0x7f000001:8080"), { host: "127.0.0.1", port: 8080 });
    assert.deepEqual(parseAllowedHost("MCP.Internal"), { host: "mcp.internal", port: null });
    assert.deepEqual(parseAllowedHost("::1"), { host: "[::1]", port: null });
    assert.deepEqual(parseAllowedHost("[::ffff:127.0.0.1]:80"), { host: "[::ffff:7f00:1]", port: 80 });
    for (const bad of ["", "http://x", "a/b", "user@x", "::1:99999x", "x:0", "x:70000", "fe80::1%eth0"]) {
      assert.equal(typeof parseAllowedHost(bad), "string", bad);
    }
    const parsed = configSchema.safeParse({ http: { request_mcp_allowed_hosts: ["ok", "a/b"] } });
    assert.equal(parsed.success, false);
    assert.deepEqual(parsed.error?.issues.map((issue) => [issue.path.join("."), issue.message]), [
      ["http.request_mcp_allowed_hosts.1", '"a/b" is not a host: give a host name or an IP address, optionally with :port (an IPv6 address in brackets when a port follows)'],
    ]);
  });
});

describe("RemoteAddressPolicy", () => {
  const refused = async (policy: RemoteAddressPolicy, url: string): Promise<string> => {
    const error = await policy.check(new URL(url)).then(
      () => assert.fail(`${url} was allowed`),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof AddressRefused, String(error));
    return error.message;
  };

  it("a name is refused when ANY address it resolves to is not public; a public one is returned with all its addresses", async () => {
    const policy = new RemoteAddressPolicy([], fakeDns({ "rebind.test": ["93.184.216.34", "10.0.0.7"], "public.test": ["93.184.216.34", "2606:2800:220:1::1"] }));
    assert.equal(await refused(policy, "http://rebind.test/mcp"), `rebind.test resolves to 10.0.0.7, a private address; ${REFUSAL}`);
    assert.deepEqual(await policy.check(new URL("https://public.test/mcp")), [
      { address: "93.184.216.34", family: 4 },
      { address: "2606:2800:220:1::1", family: 6 },
    ]);
    assert.equal(await refused(policy, "http://169.254.169.254/latest/meta-data"), `169.254.169.254 is a link-local address; ${REFUSAL}`);
    assert.equal(await refused(policy, "http://2130706433/"), `127.0.0.1 is a loopback address; ${REFUSAL}`);
    assert.equal(await refused(policy, "http://[fd00::5]:8080/"), `[fd00::5] is a private address; ${REFUSAL}`);
    assert.equal(await refused(policy, "http://[::]/"), `[::] is an unspecified address; ${REFUSAL}`);
    const unknown = await policy.check(new URL("http://nowhere.test/")).catch((error: unknown) => error);
    assert.equal((unknown as Error).message, "nowhere.test: host not found");
  });

  it("an entry allows its host (any port, or the one it names); an IP entry also allows a name resolving only to listed addresses", async () => {
    const dns = fakeDns({ "mcp.internal": ["10.0.0.5"], "two.internal": ["10.0.0.5", "10.0.0.6"] });
    const policy = new RemoteAddressPolicy(["127.0.0.1:9000", "10.0.0.5", "[::1]", "svc.internal"], async (name) => (name === "svc.internal" ? [{ address: "192.168.0.9", family: 4 }] : dns(name)));
    assert.deepEqual(await policy.check(new URL("http://0x7f000001:9000/")), [{ address: "127.0.0.1", family: 4 }]);
    assert.match(await refused(policy, "http://127.0.0.1:9001/"), /^127\.0\.0\.1 is a loopback address/);
    assert.deepEqual(await policy.check(new URL("http://[0::1]:1234/")), [{ address: "::1", family: 6 }]);
    assert.deepEqual(await policy.check(new URL("http://svc.internal/")), [{ address: "192.168.0.9", family: 4 }]);
    assert.deepEqual(await policy.check(new URL("http://mcp.internal/")), [{ address: "10.0.0.5", family: 4 }]);
    assert.equal(await refused(policy, "http://two.internal/"), `two.internal resolves to 10.0.0.6, a private address; ${REFUSAL}`);
  });
});

describe("pinnedFetch", () => {
  it("connects to the checked address (the URL's host in the Host header), and refuses before connecting", async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.host}`);
      res.writeHead(200, { "Content-Type": "application/json" }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const allowed = pinnedFetch(new RemoteAddressPolicy(["127.0.0.1"], fakeDns({ "pinned.invalid": ["127.0.0.1"] })));
      const response = await allowed(`http://pinned.invalid:${port}/mcp?x=1`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      assert.deepEqual([response.status, await response.json()], [200, { ok: true }]);
      assert.deepEqual(seen, [`POST /mcp?x=1 pinned.invalid:${port}`]);
      const refusing = pinnedFetch(new RemoteAddressPolicy([], fakeDns({ "pinned.invalid": ["127.0.0.1"] })));
      await assert.rejects(refusing(`http://pinned.invalid:${port}/mcp`), AddressRefused);
      assert.equal(seen.length, 1);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
