import { isIPv4, isIPv6 } from 'node:net';

/**
 * Which IP addresses an outbound call to a user-given URL may never reach (docs/decisions.md "Secrets
 * and the network guard"). Pure: no DNS, no sockets.
 *
 * IPv4 (IANA special-purpose registry, the ranges that are not the public Internet):
 *   0.0.0.0/8 this network (and unspecified), 10/8, 172.16/12, 192.168/16 private, 100.64/10 CGNAT,
 *   127/8 loopback, 169.254/16 link-local (cloud metadata), 192.0.0/24 IETF protocol assignments,
 *   192.0.2/24, 198.51.100/24, 203.0.113/24 documentation, 192.88.99/24 6to4 relay anycast,
 *   198.18/15 benchmarking, 224/4 multicast, 240/4 reserved (and 255.255.255.255 broadcast).
 * IPv6: only global unicast 2000::/3 may be reached, and inside it not 2001::/23 (IETF protocol
 *   assignments: Teredo 2001::/32, benchmarking 2001:2::/48, ORCHID), 2001:db8::/32 and 3fff::/20
 *   (documentation). So ::/128 unspecified, ::1 loopback, fc00::/7 unique local, fe80::/10 link-local,
 *   fec0::/10 site-local, ff00::/8 multicast, 100::/64 discard and every unassigned block are refused.
 *   Addresses that carry an IPv4 address are judged by that address: IPv4-mapped ::ffff:0:0/96,
 *   IPv4-translated ::ffff:0:0:0/96, IPv4-compatible ::/96, NAT64 64:ff9b::/96 and 6to4 2002::/16;
 *   the local-use NAT64 prefix 64:ff9b:1::/48 is refused outright.
 */

interface V4Range {
  base: number;
  bits: number;
  reason: string;
}

const v4 = (cidr: string, reason: string): V4Range => {
  const [ip, bits] = cidr.split('/');
  return { base: parseIPv4(ip)!, bits: Number(bits), reason };
};

const FORBIDDEN_V4: V4Range[] = [
  v4('0.0.0.0/8', 'unspecified or "this network" address'),
  v4('10.0.0.0/8', 'private address'),
  v4('100.64.0.0/10', 'carrier-grade NAT address'),
  v4('127.0.0.0/8', 'loopback address'),
  v4('169.254.0.0/16', 'link-local address'),
  v4('172.16.0.0/12', 'private address'),
  v4('192.0.0.0/24', 'IETF protocol assignment'),
  v4('192.0.2.0/24', 'documentation address'),
  v4('192.88.99.0/24', '6to4 relay anycast address'),
  v4('192.168.0.0/16', 'private address'),
  v4('198.18.0.0/15', 'benchmarking address'),
  v4('198.51.100.0/24', 'documentation address'),
  v4('203.0.113.0/24', 'documentation address'),
  v4('224.0.0.0/4', 'multicast address'),
  v4('240.0.0.0/4', 'reserved or broadcast address'),
];

/** Parses a dotted-quad IPv4 address (four decimal parts) to an unsigned 32-bit number. */
export function parseIPv4(ip: string): number | null {
  if (!isIPv4(ip)) return null;
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

/** Parses an IPv6 address (with `::`, an IPv4 tail or a zone id) to its eight 16-bit groups. */
export function parseIPv6(input: string): number[] | null {
  const ip = input.replace(/%.*$/, '');
  if (!isIPv6(ip)) return null;
  let text = ip.toLowerCase();
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const n = parseIPv4(tail[1]);
    if (n === null) return null;
    text = `${text.slice(0, -tail[1].length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, rest] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = rest === undefined ? [] : rest ? rest.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  if (rest === undefined ? missing !== 0 : missing < 1) return null;
  const groups = [...headGroups, ...Array<string>(rest === undefined ? 0 : missing).fill('0'), ...tailGroups];
  return groups.map((g) => parseInt(g, 16));
}

const inV4 = (n: number, range: V4Range) =>
  range.bits === 0 || n >>> (32 - range.bits) === range.base >>> (32 - range.bits);

function v4Reason(n: number): string | null {
  for (const range of FORBIDDEN_V4) if (inV4(n, range)) return range.reason;
  return null;
}

const embeddedV4 = (hi: number, lo: number) => hi * 65536 + lo;

function v6Reason(g: number[]): string | null {
  const zeroUpTo = (count: number) => g.slice(0, count).every((x) => x === 0);
  if (g.every((x) => x === 0)) return 'unspecified address';
  if (zeroUpTo(7) && g[7] === 1) return 'loopback address';
  const carried = (label: string, n: number) => {
    const reason = v4Reason(n);
    return reason ? `${label} of a ${reason}` : null;
  };
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated), ::a.b.c.d (compatible).
  if (zeroUpTo(5) && g[5] === 0xffff) return carried('IPv4-mapped form', embeddedV4(g[6], g[7]));
  if (zeroUpTo(4) && g[4] === 0xffff && g[5] === 0)
    return carried('IPv4-translated form', embeddedV4(g[6], g[7]));
  if (zeroUpTo(6)) return carried('IPv4-compatible form', embeddedV4(g[6], g[7]));
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0))
    return carried('NAT64 form', embeddedV4(g[6], g[7]));
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return 'local-use NAT64 address';
  if (g[0] === 0x2002) return carried('6to4 form', embeddedV4(g[1], g[2]));
  if ((g[0] & 0xe000) !== 0x2000) {
    if ((g[0] & 0xfe00) === 0xfc00) return 'unique local address';
    if ((g[0] & 0xffc0) === 0xfe80) return 'link-local address';
    if ((g[0] & 0xffc0) === 0xfec0) return 'site-local address';
    if ((g[0] & 0xff00) === 0xff00) return 'multicast address';
    return 'reserved address (outside global unicast 2000::/3)';
  }
  if (g[0] === 0x2001 && g[1] < 0x200) return g[1] === 0 ? 'Teredo address' : 'IETF protocol assignment';
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'documentation address';
  if ((g[0] & 0xfff0) === 0x3ff0) return 'documentation address';
  return null;
}

/**
 * Why an address must not be reached, or null when it may be. Anything that is not an IP address is
 * refused (fail closed).
 */
export function forbiddenAddressReason(ip: string): string | null {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const n4 = parseIPv4(bare);
  if (n4 !== null) return v4Reason(n4);
  const g6 = parseIPv6(bare);
  if (g6 !== null) return v6Reason(g6);
  return 'not an IP address';
}

export function isForbiddenAddress(ip: string): boolean {
  return forbiddenAddressReason(ip) !== null;
}
