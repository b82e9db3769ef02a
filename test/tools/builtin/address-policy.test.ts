import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/errors.js';
import { httpFetchTool } from '../../../src/tools/builtin/http-fetch.js';
import { bareHost, blockedRange, carriedIpv4, isAllowedHost, rangeLabel, type ResolveHost } from '../../../src/tools/builtin/lib/address-policy.js';
import { makeContext } from '../support.js';

describe('blockedRange: IPv6 forms that carry an IPv4 address', () => {
  it.each([
    ['IPv4-mapped', '::ffff:127.0.0.1'],
    ['IPv4-mapped, hex', '::ffff:7f00:1'],
    ['IPv4-compatible', '::127.0.0.1'],
    ['IPv4-compatible, hex', '::7f00:1'],
    ['IPv4-translated (SIIT)', '::ffff:0:7f00:1'],
    ['NAT64, well-known prefix', '64:ff9b::7f00:1'],
    ['NAT64, local-use prefix', '64:ff9b:1::7f00:1'],
    ['6to4', '2002:7f00:1::'],
    ['Teredo with client 127.0.0.1', '2001:0:4136:e378:8000:63bf:80ff:fffe'],
    ['ISATAP under a public prefix', '2a00:1450::5efe:7f00:1'],
    ['ISATAP, universal bit set', '2a00:1450::200:5efe:7f00:1'],
    ['NAT64 of a private address', '64:ff9b::a00:1'],
    ['NAT64 of the cloud metadata address', '64:ff9b::a9fe:a9fe'],
    ['ISATAP of a private address', '2a00:1450::5efe:c0a8:101'],
  ])('refuses %s (%s)', (_form, address) => {
    expect(blockedRange(address)).toBeDefined();
  });

  it.each([
    ['a public IPv6 address', '2a00:1450:4001:81c::200e'],
    ['a public IPv4 address, mapped', '::ffff:8.8.8.8'],
    ['a public IPv4 address behind the well-known NAT64 prefix (DNS64)', '64:ff9b::808:808'],
    ['ISATAP of a public IPv4 address under a public prefix', '2a00:1450::5efe:808:808'],
  ])('allows %s (%s)', (_form, address) => {
    expect(blockedRange(address)).toBeUndefined();
  });

  it('refuses ISATAP under a link-local prefix even when it carries a public address', () => {
    expect(blockedRange('fe80::5efe:808:808')).toBe('linkLocal');
  });

  it('names the IPv4 address each form carries', () => {
    expect(carriedIpv4('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(carriedIpv4('64:ff9b::a9fe:a9fe')).toBe('169.254.169.254');
    expect(carriedIpv4('2002:7f00:1::')).toBe('127.0.0.1');
    expect(carriedIpv4('2001:0:4136:e378:8000:63bf:80ff:fffe')).toBe('127.0.0.1');
    expect(carriedIpv4('2a00:1450:4001:81c::200e')).toBeUndefined();
  });
});

describe('http_fetch: 127.0.0.1 written as IPv6', () => {
  let server: Server;
  let port = 0;
  const hits: string[] = [];
  const table: Record<string, string[]> = { 'mapped.test': ['::ffff:127.0.0.1'], 'nat64.test': ['64:ff9b::7f00:1'] };
  const resolve: ResolveHost = async (host) => (table[host] ?? []).map((address) => ({ address, family: 6 }));
  const fetchText = (url: string) =>
    httpFetchTool({ allowHosts: [], maxBytes: 10_000, timeoutMs: 5_000, resolve }).execute({ url }, makeContext());

  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('secret admin page');
    });
    await new Promise<void>((done, fail) => {
      server.once('error', fail);
      server.listen(0, '127.0.0.1', done);
    });
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  });

  beforeEach(() => {
    hits.length = 0;
  });

  it('the server is up, and an IPv4-mapped address does reach it when nothing refuses', async () => {
    await (await fetch(`http://[::ffff:127.0.0.1]:${port}/control`)).text();
    expect(hits).toEqual(['/control']);
  });

  it.each([
    '[::127.0.0.1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[0:0:0:0:0:ffff:127.0.0.1]',
    '[::ffff:0:127.0.0.1]',
    '[64:ff9b::127.0.0.1]',
    '[64:ff9b:1::7f00:1]',
    '[2002:7f00:1::]',
    '[2001:0:4136:e378:8000:63bf:80ff:fffe]',
    '[2a00:1450::5efe:127.0.0.1]',
  ])('refuses http://%s:PORT/ and never connects', async (host) => {
    const error: unknown = await fetchText(`http://${host}:${port}/page`).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as Error).message).toMatch(/^refusing to fetch http:\/\/\[[0-9a-f:]+\]:\d+: [0-9a-f:]+ \(carrying 127\.0\.0\.1\) is a [a-zA-Z0-9 -]+ address\./);
    expect(hits).toEqual([]);
  });

  it.each(['mapped.test', 'nat64.test'])('refuses %s, whose only address is 127.0.0.1 written as IPv6', async (name) => {
    await expect(fetchText(`http://${name}:${port}/page`)).rejects.toThrow(/\.test \(resolves to [0-9a-f.:]+, carrying 127\.0\.0\.1\) is a loopback address\./);
    expect(hits).toEqual([]);
  });
});

describe('blockedRange and rangeLabel: what the refusal calls each address', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['169.254.1.1', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['::ffff:169.254.169.254', 'cloud metadata'],
    ['64:ff9b::a9fe:a9fe', 'cloud metadata'],
    ['fd12:3456::1', 'unique-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    // As a URL writes them ([::127.0.0.1] becomes [::7f00:1]); compatible forms are refused even for a public address.
    ['::7f00:1', 'deprecated IPv4-compatible'],
    ['::808:808', 'deprecated IPv4-compatible'],
    ['64:ff9b:1::808:808', 'local-use NAT64'],
    ['2002:808:808::1', '6to4 tunnel'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'Teredo tunnel'],
    ['2001:db8::1', 'reserved'],
    ['2001:10::1', 'special-purpose (deprecatedOrchid)'],
    ['not an address', 'special-purpose (invalid)'],
  ])('%s is refused as %s', (address, label) => {
    const range = blockedRange(address);
    expect(range).toBeDefined();
    expect(rangeLabel(range!, address)).toBe(label);
  });

  it.each(['8.8.8.8', '1.1.1.1', '2a00:1450:4001:81c::200e', '2a00::808:808', '::ffff:1.1.1.1', '64:ff9b::101:101', '2a00:1450::200:5efe:808:808'])('%s is public', (address) => {
    expect(blockedRange(address)).toBeUndefined();
  });

  it('judges the ISATAP interface id by both of its forms only', () => {
    expect(blockedRange('2a00:1450::5efe:a00:1')).toBe('private');
    expect(blockedRange('2a00:1450::200:5efe:a00:1')).toBe('private');
    // Other interface ids that happen to end in an address-like value are ordinary addresses.
    expect(blockedRange('2a00:1450::100:5efe:a00:1')).toBeUndefined();
    expect(blockedRange('2a00:1450::5eff:a00:1')).toBeUndefined();
  });

  it('::1 is loopback, not a deprecated IPv4-compatible address; ::2 is one', () => {
    expect(blockedRange('::1')).toBe('loopback');
    expect(blockedRange('::2')).toBe('ipv4Compatible');
    expect(blockedRange('::1:0')).toBe('ipv4Compatible');
    expect(blockedRange('1::1')).toBeUndefined();
  });
});

describe('carriedIpv4: every form', () => {
  it.each([
    ['::ffff:10.0.0.1', '10.0.0.1'],
    ['::a00:1', '10.0.0.1'],
    ['::ffff:0:a00:1', '10.0.0.1'],
    ['64:ff9b::a00:1', '10.0.0.1'],
    ['2a00:1450::5efe:a00:1', '10.0.0.1'],
    ['2a00:1450::200:5efe:c0a8:101', '192.168.1.1'],
    ['2002:c0a8:101::1', '192.168.1.1'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '192.0.2.45'],
  ])('%s carries %s', (address, carried) => {
    expect(carriedIpv4(address)).toBe(carried);
  });

  it.each(['8.8.8.8', 'nonsense', '::1', '2a00:1450::1'])('%s carries none', (address) => {
    expect(carriedIpv4(address)).toBeUndefined();
  });
});

describe('isAllowedHost: tools.http.allowHosts', () => {
  it('matches a name exactly, whatever its case, and trims the entry', () => {
    expect(isAllowedHost('Example.COM', ['  example.com '])).toBe(true);
    expect(isAllowedHost('example.com', ['EXAMPLE.com'])).toBe(true);
    expect(isAllowedHost('www.example.com', ['example.com'])).toBe(false);
    expect(isAllowedHost('example.com.evil.test', ['example.com'])).toBe(false);
    expect(isAllowedHost('example.com', [])).toBe(false);
  });

  it('"*.example.com" allows any subdomain, but neither the bare name nor a name that merely ends the same', () => {
    expect(isAllowedHost('api.example.com', ['*.example.com'])).toBe(true);
    expect(isAllowedHost('a.b.EXAMPLE.com', ['*.Example.com'])).toBe(true);
    expect(isAllowedHost('example.com', ['*.example.com'])).toBe(false);
    expect(isAllowedHost('badexample.com', ['*.example.com'])).toBe(false);
  });

  it('an IPv6 address matches with or without its brackets, on either side', () => {
    expect(isAllowedHost('[fd00::1]', ['fd00::1'])).toBe(true);
    expect(isAllowedHost('fd00::1', ['[fd00::1]'])).toBe(true);
    expect(isAllowedHost('[fd00::2]', ['[fd00::1]'])).toBe(false);
  });

  it('bareHost removes only a pair of brackets', () => {
    expect(bareHost('[::1]')).toBe('::1');
    expect(bareHost('[::1')).toBe('[::1');
    expect(bareHost('::1]')).toBe('::1]');
    expect(bareHost('example.com')).toBe('example.com');
  });
});
