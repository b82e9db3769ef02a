import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/errors.js';
import { httpFetchTool, type HttpFetchOptions } from '../../../src/tools/builtin/http-fetch.js';
import type { ResolveHost } from '../../../src/tools/builtin/lib/address-policy.js';
import { makeContext } from '../support.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A local server that records every request path it receives. */
async function startServer(host: string, handler: Handler): Promise<{ server: Server; port: number; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  return { server, port: (server.address() as AddressInfo).port, hits };
}

async function stop(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/** Test names resolve through this table; anything else is unknown. */
const table: Record<string, string[]> = {
  'evil.test': ['127.0.0.1'],
  'mixed.test': ['93.184.215.14', '127.0.0.1'],
  'redirector.test': ['127.0.0.1'],
  'site.test': ['127.0.0.1'],
};
let lookups: string[] = [];
const resolve: ResolveHost = async (host) => {
  lookups.push(host);
  const found = table[host];
  if (!found) throw new Error('ENOTFOUND');
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

const fetchTool = (options: Partial<HttpFetchOptions> = {}) =>
  httpFetchTool({ allowHosts: [], maxBytes: 100_000, timeoutMs: 5_000, resolve, ...options });

const fetchText = (url: string, options: Partial<HttpFetchOptions> = {}, signal?: AbortSignal) =>
  fetchTool(options).execute({ url }, makeContext(signal ? { signal } : {}));

let v4: Awaited<ReturnType<typeof startServer>>;
let v6: Awaited<ReturnType<typeof startServer>> | undefined;

beforeAll(async () => {
  v4 = await startServer('127.0.0.1', (req, res) => {
    const port = (req.socket.address() as AddressInfo).port;
    switch (req.url) {
      case '/page':
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end('<html><head><title>T</title></head><body><h1>Hello</h1><p>from <b>pincer</b></p><img src="x.png"></body></html>');
        return;
      case '/to-loopback':
        res.writeHead(302, { location: `http://127.0.0.1:${port}/secret` });
        res.end();
        return;
      case '/to-evil-name':
        res.writeHead(301, { location: `http://evil.test:${port}/secret` });
        res.end();
        return;
      case '/to-page':
        res.writeHead(307, { location: '/page' });
        res.end();
        return;
      case '/loop':
        res.writeHead(302, { location: '/loop' });
        res.end();
        return;
      case '/big':
        res.setHeader('content-type', 'text/plain');
        res.end('x'.repeat(50_000));
        return;
      case '/gzip':
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync(JSON.stringify({ ok: true })));
        return;
      case '/binary':
        res.setHeader('content-type', 'image/png');
        res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]));
        return;
      case '/slow':
        setTimeout(() => res.end('late'), 10_000).unref();
        return;
      default:
        res.statusCode = 404;
        res.end('not here');
    }
  });
  v6 = await startServer('::1', (_req, res) => res.end('v6')).catch(() => undefined);
});

afterAll(async () => {
  await stop(v4?.server);
  await stop(v6?.server);
});

beforeEach(() => {
  v4.hits.length = 0;
  if (v6) v6.hits.length = 0;
  lookups = [];
});

describe('http_fetch: SSRF protection', () => {
  it('refuses 127.0.0.1 and never connects', async () => {
    await expect(fetchText(`http://127.0.0.1:${v4.port}/page`)).rejects.toThrow(
      new ToolError(
        `refusing to fetch http://127.0.0.1:${v4.port}: 127.0.0.1 is a loopback address. ` +
          'Only public addresses can be fetched unless an administrator adds the host to tools.http.allowHosts.',
      ),
    );
    expect(v4.hits).toEqual([]);
  });

  it('refuses ::1 and never connects', async (context) => {
    if (!v6) return context.skip('IPv6 loopback (::1) is unavailable here: no server could listen on it');
    await expect(fetchText(`http://[::1]:${v6.port}/`)).rejects.toThrow(/^refusing to fetch http:\/\/\[::1\]:\d+: ::1 is a loopback address\./);
    expect(v6.hits).toEqual([]);
    // The server is really there and counts what reaches it, so the empty list above means something.
    await (await fetch(`http://[::1]:${v6.port}/control`)).text();
    expect(v6.hits).toEqual(['/control']);
  });

  it.each([
    ['http://10.1.2.3/', 'private'],
    ['http://192.168.0.10/', 'private'],
    ['http://172.16.5.4/', 'private'],
    ['http://169.254.169.254/latest/meta-data/', 'cloud metadata'],
    ['http://169.254.10.10/', 'link-local'],
    ['http://100.64.0.1/', 'carrier-grade NAT'],
    ['http://[fd00::1]/', 'unique-local'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://2130706433/', 'loopback'],
    ['http://0x7f.1/', 'loopback'],
  ])('refuses %s (%s)', async (url, label) => {
    await expect(fetchText(url)).rejects.toThrow(new RegExp(`is a ${label} address\\.`));
  });

  it('refuses a DNS name that resolves to loopback, naming the address', async () => {
    await expect(fetchText(`http://evil.test:${v4.port}/page`)).rejects.toThrow(
      `refusing to fetch http://evil.test:${v4.port}: evil.test (resolves to 127.0.0.1) is a loopback address.`,
    );
    expect(v4.hits).toEqual([]);
  });

  it('refuses "localhost" through the system resolver', async () => {
    const tool = httpFetchTool({ allowHosts: [], maxBytes: 1000, timeoutMs: 5000 });
    await expect(tool.execute({ url: `http://localhost:${v4.port}/page` }, makeContext())).rejects.toThrow(/localhost \(resolves to (127\.0\.0\.1|::1)\) is a loopback address/);
    expect(v4.hits).toEqual([]);
  });

  it('refuses a name when any of its addresses is private', async () => {
    await expect(fetchText('http://mixed.test/')).rejects.toThrow('mixed.test (resolves to 127.0.0.1) is a loopback address.');
  });

  it('checks every redirect: an allowed host redirecting to loopback is refused', async () => {
    const options = { allowHosts: ['redirector.test'] };
    await expect(fetchText(`http://redirector.test:${v4.port}/to-loopback`, options)).rejects.toThrow(/127\.0\.0\.1 is a loopback address/);
    await expect(fetchText(`http://redirector.test:${v4.port}/to-evil-name`, options)).rejects.toThrow(/evil\.test \(resolves to 127\.0\.0\.1\) is a loopback address/);
    expect(v4.hits).toEqual(['/to-loopback', '/to-evil-name']);
  });

  it('fetches from a host in allowHosts, turning HTML into text', async () => {
    const out = await fetchText(`http://127.0.0.1:${v4.port}/page`, { allowHosts: ['127.0.0.1'] });
    expect(out).toBe(`URL: http://127.0.0.1:${v4.port}/page\nStatus: 200 OK\nContent-Type: text/html; charset=utf-8\n\nHELLO\n\nfrom pincer`);
  });

  it('connects to the address it checked (allowed names resolve through the same resolver)', async () => {
    const out = await fetchText(`http://site.test:${v4.port}/to-page`, { allowHosts: ['*.test'] });
    expect(out).toContain(`URL: http://site.test:${v4.port}/page`);
    expect(lookups).toEqual(['site.test', 'site.test']);
  });
});

describe('http_fetch: limits and content', () => {
  const allowed = { allowHosts: ['127.0.0.1'] };
  const base = () => `http://127.0.0.1:${v4.port}`;

  it('stops after 5 redirects', async () => {
    await expect(fetchText(`${base()}/loop`, allowed)).rejects.toThrow(`too many redirects (more than 5) starting at ${base()}/loop.`);
    expect(v4.hits).toHaveLength(6);
  });

  it('cuts the body at tools.http.maxBytes with a note', async () => {
    const out = await fetchText(`${base()}/big`, { ...allowed, maxBytes: 1000 });
    expect(out).toContain('Note: the body was cut at 1000 bytes.');
    expect(out.endsWith(`\n\n${'x'.repeat(1000)}`)).toBe(true);
  });

  it('gives up after tools.http.timeoutMs', async () => {
    await expect(fetchText(`${base()}/slow`, { ...allowed, timeoutMs: 200 })).rejects.toThrow(`fetching ${base()}/slow took longer than 0.2 s.`);
  });

  it('decompresses, reports the status of errors and does not show binary content', async () => {
    expect(await fetchText(`${base()}/gzip`, allowed)).toMatch(/\n\n\{"ok":true\}$/);
    expect(await fetchText(`${base()}/missing`, allowed)).toMatch(/Status: 404 Not Found[\s\S]*not here$/);
    expect(await fetchText(`${base()}/binary`, allowed)).toMatch(/\[binary content, 7 bytes, not shown\]$/);
  });

  it('refuses other schemes, credentials in URLs and nonsense', async () => {
    await expect(fetchText('file:///etc/passwd')).rejects.toThrow('only http and https URLs can be fetched, not file:');
    await expect(fetchText('http://user:pw@example.com/')).rejects.toThrow('URLs with a user name or password are not fetched.');
    await expect(fetchText('not a url')).rejects.toThrow('"not a url" is not a valid URL.');
  });

  it('needs approval unless always allowed, and is not read-only', () => {
    const tool = fetchTool();
    expect(tool.requiresApproval({ url: 'https://example.com' })).toBe('unlessAutoApproved');
    expect(tool.readOnly).toBe(false);
  });
});
