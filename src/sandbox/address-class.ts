import { BlockList, isIPv4, isIPv6 } from "node:net";

/** Why an address is not on the public internet, or `public`. */
export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "shared"
  | "link-local"
  | "unspecified"
  | "multicast"
  | "reserved"
  | "unique-local"
  | "invalid";

/** IPv4 ranges that are not the public internet (RFC 6890's special-purpose registry, the parts that matter here). */
const IPV4: [string, number, AddressClass][] = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared"],
  ["127.0.0.0", 8, "loopback"],
  // The cloud metadata address 169.254.169.254 is in here.
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "reserved"],
  ["192.88.99.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved"],
  ["198.51.100.0", 24, "reserved"],
  ["203.0.113.0", 24, "reserved"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

/** IPv6 ranges that are not the public internet. Ranges that embed an IPv4 address are judged by that address instead. */
const IPV6: [string, number, AddressClass][] = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["100::", 64, "reserved"],
  // Tunnels and translators whose far end Lisa cannot judge: Teredo and local-use NAT64 (RFC 8215).
  ["2001::", 32, "reserved"],
  ["64:ff9b:1::", 48, "reserved"],
  ["2001:db8::", 32, "reserved"],
  ["fc00::", 7, "unique-local"],
  ["fe80::", 10, "link-local"],
  // Deprecated site-local: still routed privately where it is used.
  ["fec0::", 10, "private"],
  ["ff00::", 8, "multicast"],
];

const lists = new Map<AddressClass, BlockList>();
for (const [network, prefix, kind] of IPV4) addTo(kind, network, prefix, "ipv4");
for (const [network, prefix, kind] of IPV6) addTo(kind, network, prefix, "ipv6");

function addTo(kind: AddressClass, network: string, prefix: number, type: "ipv4" | "ipv6") {
  const list = lists.get(kind) ?? new BlockList();
  list.addSubnet(network, prefix, type);
  lists.set(kind, list);
}

/** The IPv4 address an IPv6 one carries: IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`. */
function embeddedIPv4(address: string): string | undefined {
  const groups = expandIPv6(address);
  if (!groups) return undefined;
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zeros(0, 5) && (groups[5] === 0xffff || groups[5] === 0) && !(zeros(5, 7) && (groups[7] ?? 0) <= 1))
    return v4(groups[6] ?? 0, groups[7] ?? 0);
  // IPv4-translated (RFC 2765): ::ffff:0:a.b.c.d.
  if (zeros(0, 4) && groups[4] === 0xffff && groups[5] === 0) return v4(groups[6] ?? 0, groups[7] ?? 0);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return v4(groups[6] ?? 0, groups[7] ?? 0);
  if (groups[0] === 0x2002) return v4(groups[1] ?? 0, groups[2] ?? 0);
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included). */
function expandIPv6(address: string): number[] | undefined {
  let text = address.toLowerCase().split("%")[0] ?? "";
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (dotted) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted.split(".").map(Number);
    text = `${text.slice(0, -dotted.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string) => (part ? part.split(":").map((g) => Number.parseInt(g, 16)) : []);
  const first = parse(head);
  const last = tail === undefined ? [] : parse(tail);
  const groups = tail === undefined ? first : [...first, ...Array(8 - first.length - last.length).fill(0), ...last];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/**
 * Where an IP address leads: `public`, or the kind of special-purpose range it is in (loopback,
 * RFC 1918, CGNAT, link-local and the metadata address, multicast, reserved, IPv6 unique-local).
 * An IPv6 address that carries an IPv4 address is judged by that address.
 */
export function classifyAddress(address: string): AddressClass {
  if (isIPv4(address)) {
    for (const [kind, list] of lists) if (list.check(address, "ipv4")) return kind;
    return "public";
  }
  if (!isIPv6(address)) return "invalid";
  const v4 = embeddedIPv4(address);
  if (v4) return classifyAddress(v4);
  for (const [kind, list] of lists) if (list.check(address, "ipv6")) return kind;
  return "public";
}
