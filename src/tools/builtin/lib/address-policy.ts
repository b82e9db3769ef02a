/**
 * Which network addresses the HTTP tool may reach. Only public unicast
 * addresses are allowed; private, loopback, link-local, unique-local, CGNAT,
 * cloud metadata and every other special range are refused, unless the host
 * name is in `tools.http.allowHosts`.
 */
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** One resolved address. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses (injectable so tests can point a name anywhere). */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

/** The system resolver, every address of the name. */
export const systemResolve: ResolveHost = async (hostname) => {
  const found = await lookup(hostname, { all: true, verbatim: true });
  return found.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));
};

/**
 * The range name of an address when it may not be fetched (`loopback`,
 * `private`, `linkLocal`, ...), or undefined for a public unicast address.
 * An IPv6 address that carries an IPv4 address is judged as that IPv4 address
 * too (see {@link carriedIpv4}); tunnelling forms that deliver to whatever IPv4
 * address the writer chose are refused outright.
 */
export function blockedRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'invalid';
  // `process` turns an IPv4-mapped address (::ffff:a.b.c.d) into the IPv4 address.
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return unicastOrRange(parsed);
  const ipv6 = parsed as ipaddr.IPv6;
  const tunnel = refusedTunnel(ipv6);
  if (tunnel) return tunnel;
  const range = ipv6.range();
  // Translated forms reach exactly the IPv4 address they carry; DNS64 hands out
  // 64:ff9b::/96 addresses for every IPv4-only site, so public ones stay reachable.
  if (range === 'rfc6052' || range === 'rfc6145') return unicastOrRange(lowIpv4(ipv6));
  const isatap = isIsatap(ipv6) ? lowIpv4(ipv6) : undefined;
  return unicastOrRange(ipv6) ?? (isatap && unicastOrRange(isatap));
}

/** The range name, or undefined for ordinary unicast: new special ranges stay refused by default. */
function unicastOrRange(address: ipaddr.IPv4 | ipaddr.IPv6): string | undefined {
  const range = address.range();
  return range === 'unicast' ? undefined : range;
}

const NAT64_LOCAL = ipaddr.IPv6.parse('64:ff9b:1::');

/**
 * IPv6 forms refused whatever IPv4 address they carry: IPv4-compatible
 * (::a.b.c.d, deprecated; some stacks still tunnel it), 6to4 (2002::/16),
 * Teredo (2001::/32) and local-use NAT64 (64:ff9b:1::/48, where the IPv4
 * address sits wherever the operator's prefix length puts it).
 */
function refusedTunnel(address: ipaddr.IPv6): string | undefined {
  if (isIpv4Compatible(address)) return 'ipv4Compatible';
  if (address.match(NAT64_LOCAL, 48)) return 'nat64Local';
  const range = address.range();
  return range === '6to4' || range === 'teredo' ? range : undefined;
}

/** ::a.b.c.d, but not :: nor ::1. */
function isIpv4Compatible(address: ipaddr.IPv6): boolean {
  const [a, b, c, d, e, f, g, h] = address.parts as [number, number, number, number, number, number, number, number];
  return a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0 && (g !== 0 || h > 1);
}

/** An ISATAP interface id (0000:5efe or, universal, 0200:5efe) under any prefix: the last 32 bits are an IPv4 address. */
function isIsatap(address: ipaddr.IPv6): boolean {
  return (address.parts[4]! & 0xfdff) === 0 && address.parts[5] === 0x5efe;
}

/** The IPv4 address in the last 32 bits. */
function lowIpv4(address: ipaddr.IPv6): ipaddr.IPv4 {
  return ipv4Of(address.parts[6]!, address.parts[7]!);
}

function ipv4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * The IPv4 address an IPv6 address carries, if any: mapped, IPv4-compatible,
 * NAT64, IPv4-translated, ISATAP, 6to4 (bits 16-47) or Teredo (the client,
 * stored inverted in the last 32 bits).
 */
export function carriedIpv4(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return undefined;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return undefined;
  const ipv6 = parsed as ipaddr.IPv6;
  const range = ipv6.range();
  const [, second, third, , , , seventh, eighth] = ipv6.parts as number[];
  if (range === '6to4') return ipv4Of(second!, third!).toString();
  if (range === 'teredo') return ipv4Of(~seventh! & 0xffff, ~eighth! & 0xffff).toString();
  if (range === 'ipv4Mapped' || range === 'rfc6052' || range === 'rfc6145' || isIpv4Compatible(ipv6) || isIsatap(ipv6)) return lowIpv4(ipv6).toString();
  return undefined;
}

const RANGE_LABELS: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  carrierGradeNat: 'carrier-grade NAT',
  unspecified: 'unspecified',
  multicast: 'multicast',
  broadcast: 'broadcast',
  reserved: 'reserved',
  ipv4Compatible: 'deprecated IPv4-compatible',
  nat64Local: 'local-use NAT64',
  '6to4': '6to4 tunnel',
  teredo: 'Teredo tunnel',
};

/** Plain words for a range name from {@link blockedRange}. */
export function rangeLabel(range: string, address: string): string {
  const metadata = [address, carriedIpv4(address)].includes('169.254.169.254') || address === 'fd00:ec2::254';
  return metadata ? 'cloud metadata' : (RANGE_LABELS[range] ?? `special-purpose (${range})`);
}

/** True when `hostname` is allowed by `allowHosts` (exact, case-insensitive, or `*.example.com`). */
export function isAllowedHost(hostname: string, allowHosts: readonly string[]): boolean {
  const host = bareHost(hostname).toLowerCase();
  return allowHosts.some((entry) => {
    const allowed = bareHost(entry.trim()).toLowerCase();
    if (allowed.startsWith('*.')) return host.endsWith(allowed.slice(1));
    return host === allowed;
  });
}

/** The host without IPv6 brackets. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}
