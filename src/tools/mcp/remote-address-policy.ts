import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { parseAllowedHost, REQUEST_MCP_ALLOWED_HOSTS_KEY, type AllowedHost } from "../../config/allowed-host.js";
import { RemoteFailure } from "./remote-failure.js";
import { SpecialAddresses, type AddressKind } from "./special-addresses.js";

/** Every address a host name resolves to (dns.lookup with all: true). */
export type HostLookup = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

/** An address a connection to the server may go to: one that was checked. */
export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

/** A server refused for its address, before anything connects. */
export class AddressRefused extends RemoteFailure {
  override name = "AddressRefused";
}

const defaultLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * Where an untrusted remote MCP server (one a request names) may be: not on a loopback,
 * link-local, private or other non-public address, unless `http.request_mcp_allowed_hosts` lists
 * its host. A name is resolved and refused when ANY of its addresses is refused; the caller then
 * connects to the address checked here (pinned), so a second resolution cannot bring another one.
 *
 * An entry matches the URL's host as a URL spells it (`0x7f000001` is 127.0.0.1, IPv6 in
 * brackets), on any port or on the port it names; an entry that is an IP address also allows
 * that address where a name resolves to it.
 */
export class RemoteAddressPolicy {
  private readonly allowed: AllowedHost[];
  private readonly special = new SpecialAddresses();

  constructor(
    allowedHosts: readonly string[],
    private readonly lookup: HostLookup = defaultLookup,
  ) {
    this.allowed = allowedHosts.map((entry) => {
      const parsed = parseAllowedHost(entry);
      if (typeof parsed === "string") throw new Error(`${REQUEST_MCP_ALLOWED_HOSTS_KEY}: ${parsed}`);
      return parsed;
    });
  }

  /** The addresses to connect to for `url` (its host's, in resolver order); throws AddressRefused (or RemoteFailure: no such host). */
  async check(url: URL): Promise<CheckedAddress[]> {
    const host = url.hostname;
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    const literal = host.replace(/^\[(.*)\]$/, "$1");
    const addresses = isIP(literal) === 0 ? await this.resolve(host) : [{ address: literal, family: isIP(literal) }];
    const hostListed = this.listed(host, port);
    for (const { address } of addresses) {
      const kind = this.special.kind(address);
      if (kind === null || hostListed || this.listed(ipHostname(address), port)) continue;
      const what = isIP(literal) === 0 ? `${host} resolves to ${address}, ${article(kind)} address` : `${host} is ${article(kind)} address`;
      throw new AddressRefused(`${what}; an MCP server a request names may not be on a loopback, link-local or private address unless ${REQUEST_MCP_ALLOWED_HOSTS_KEY} lists its host`);
    }
    return addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
  }

  private async resolve(host: string): Promise<ReadonlyArray<{ address: string; family: number }>> {
    const addresses = await this.lookup(host).catch(() => []);
    if (addresses.length === 0) throw new RemoteFailure(`${host}: host not found`);
    return addresses;
  }

  private listed(host: string, port: number): boolean {
    return this.allowed.some((entry) => entry.host === host && (entry.port === null || entry.port === port));
  }
}

/** An address as a URL's hostname spells it (IPv6 compressed, in brackets), to compare with the entries. */
function ipHostname(address: string): string {
  const bare = address.replace(/%.*$/, "");
  try {
    return new URL(`http://${isIP(bare) === 6 ? `[${bare}]` : bare}/`).hostname;
  } catch {
    return bare;
  }
}

function article(kind: AddressKind): string {
  return `${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind}`;
}
