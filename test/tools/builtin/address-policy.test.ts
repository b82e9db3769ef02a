import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/errors.js';
import { httpFetchTool } from '../../../src/tools/builtin/http-fetch.js';
import { blockedRange, carriedIpv4, type ResolveHost } from '../../../src/tools/builtin/lib/address-policy.js';
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
