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
 * IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
 */
export function blockedRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'invalid';
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  // Everything that is not ordinary unicast is refused: new special ranges stay refused by default.
  return range === 'unicast' ? undefined : range;
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
};

/** Plain words for a range name from {@link blockedRange}. */
export function rangeLabel(range: string, address: string): string {
  if (address === '169.254.169.254' || address === 'fd00:ec2::254') return 'cloud metadata';
  return RANGE_LABELS[range] ?? `special-purpose (${range})`;
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
