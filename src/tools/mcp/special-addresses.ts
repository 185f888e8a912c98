import { BlockList, isIPv4, isIPv6 } from "node:net";

/** Why an address is not a public one. */
export type AddressKind = "loopback" | "private" | "link-local" | "carrier-grade NAT" | "unspecified" | "multicast" | "reserved";

type Subnet = [network: string, prefix: number, kind: AddressKind];

const IPV4: readonly Subnet[] = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

const IPV6: readonly Subnet[] = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "private"],
  ["fc00::", 7, "private"],
  ["ff00::", 8, "multicast"],
];

/**
 * The loopback, private, link-local and other non-public ranges (IPv4 and IPv6), by kind. An IPv6
 * address that carries an IPv4 one (`::ffff:127.0.0.1`, `::127.0.0.1`, NAT64 `64:ff9b::/96`,
 * 6to4 `2002::/16`) is judged by the IPv4 address it reaches.
 */
export class SpecialAddresses {
  private readonly lists = new Map<AddressKind, BlockList>();

  constructor() {
    for (const [network, prefix, kind] of [...IPV4, ...IPV6]) {
      const list = this.lists.get(kind) ?? new BlockList();
      list.addSubnet(network, prefix, isIPv4(network) ? "ipv4" : "ipv6");
      this.lists.set(kind, list);
    }
  }

  /** The kind of a non-public address; null for a public one (or a string that is no IP address). */
  kind(address: string): AddressKind | null {
    const bare = address.replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
    const family = isIPv4(bare) ? "ipv4" : isIPv6(bare) ? "ipv6" : null;
    if (family === null) return null;
    if (family === "ipv6" && bare !== "::" && bare !== "::1") {
      const embedded = embeddedIPv4(ipv6Groups(bare));
      if (embedded !== null) return this.kind(embedded);
    }
    for (const [kind, list] of this.lists) if (list.check(bare, family)) return kind;
    return null;
  }
}

/** The eight 16-bit groups of an IPv6 address (valid per isIPv6, zone removed; a dotted IPv4 tail allowed). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string): number[] => (part === "" ? [] : part.split(":").map((group) => parseInt(group, 16)));
  const first = parse(head);
  if (tail === undefined) return first;
  const last = parse(tail);
  return [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last];
}

/** The IPv4 address an IPv6 one stands for (mapped, compatible, SIIT, NAT64, 6to4); null: none. */
function embeddedIPv4(groups: readonly number[]): string | null {
  const g = (index: number): number => groups[index] ?? 0;
  const zero = (from: number, to: number): boolean => groups.slice(from, to).every((group) => group === 0);
  const quad = (high: number, low: number): string => [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
  // ::a.b.c.d, ::ffff:a.b.c.d, ::ffff:0:a.b.c.d
  if (zero(0, 4) && ((g(4) === 0 && (g(5) === 0 || g(5) === 0xffff)) || (g(4) === 0xffff && g(5) === 0))) return quad(g(6), g(7));
  // 64:ff9b::/96 and the local-use 64:ff9b:1::/48
  if (g(0) === 0x64 && g(1) === 0xff9b && (zero(2, 6) || g(2) === 1)) return quad(g(6), g(7));
  if (g(0) === 0x2002) return quad(g(1), g(2));
  return null;
}
