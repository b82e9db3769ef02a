/**
 * A guarded HTTP GET for the fetch tool. Every hop (the first request and each
 * redirect, followed by hand) is checked: the host must be in the allow list or
 * resolve only to public addresses, and the connection goes to the very address
 * that was checked (no second DNS lookup an attacker could answer differently).
 */
import type { IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import ipaddr from 'ipaddr.js';
import { ToolError } from '../../../errors.js';
import { bareHost, blockedRange, carriedIpv4, isAllowedHost, rangeLabel, type ResolvedAddress, type ResolveHost } from './address-policy.js';

/** Limits and policy of a fetch. */
export interface HttpGetOptions {
  allowHosts: readonly string[];
  maxBytes: number;
  maxRedirects: number;
  resolve: ResolveHost;
  signal: AbortSignal;
  userAgent: string;
}

/** A fetched response, body bounded to `maxBytes`. */
export interface HttpGetResult {
  url: string;
  status: number;
  statusText: string;
  contentType: string;
  body: Buffer;
  truncated: boolean;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** GETs `url`, following up to `maxRedirects` redirects, refusing non-public targets. Throws ToolError. */
export async function guardedGet(url: string, options: HttpGetOptions): Promise<HttpGetResult> {
  let current = parseUrl(url);
  for (let hop = 0; ; hop++) {
    const response = await requestOnce(current, options);
    const location = response.headers.location;
    if (!REDIRECTS.has(response.statusCode ?? 0) || !location) return readBody(current, response, options);
    response.destroy();
    if (hop >= options.maxRedirects) throw new ToolError(`too many redirects (more than ${options.maxRedirects}) starting at ${url}.`);
    current = parseUrl(new URL(location, current).toString());
  }
}

/**
 * Whether `url` may be fetched at all: a valid http(s) URL whose host is
 * allowed or resolves only to public addresses. Throws the ToolError a fetch
 * would. A fetch checks again (and each redirect), since DNS answers change.
 */
export async function checkTarget(url: string, options: Pick<HttpGetOptions, 'allowHosts' | 'resolve'>): Promise<void> {
  await checkedAddresses(parseUrl(url), options);
}

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ToolError(`"${text.slice(0, 200)}" is not a valid URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ToolError(`only http and https URLs can be fetched, not ${url.protocol}`);
  if (url.username || url.password) throw new ToolError('URLs with a user name or password are not fetched.');
  return url;
}

/**
 * The addresses to connect to (undefined for an IP literal, which needs no
 * lookup), or a ToolError naming the blocked address. Allowed hosts are
 * resolved but not checked.
 */
async function checkedAddresses(url: URL, options: Pick<HttpGetOptions, 'allowHosts' | 'resolve'>): Promise<ResolvedAddress[] | undefined> {
  const host = bareHost(url.hostname);
  const allowed = isAllowedHost(host, options.allowHosts);
  if (ipaddr.isValid(host)) {
    if (!allowed) refuseIfBlocked(url, host, host);
    return undefined;
  }
  const addresses = await resolveOrFail(host, options.resolve);
  if (!allowed) for (const { address } of addresses) refuseIfBlocked(url, host, address);
  return addresses;
}

function refuseIfBlocked(url: URL, host: string, address: string): void {
  const range = blockedRange(address);
  if (!range) return;
  // An IPv6 form of an IPv4 address is named with the IPv4 address it stands for.
  const carried = carriedIpv4(address);
  const shown = carried ? `${address}, carrying ${carried}` : address;
  const target = address === host ? (carried ? `${host} (carrying ${carried})` : host) : `${host} (resolves to ${shown})`;
  throw new ToolError(
    `refusing to fetch ${url.origin}: ${target} is a ${rangeLabel(range, address)} address. ` +
      'Only public addresses can be fetched unless an administrator adds the host to tools.http.allowHosts.',
  );
}

async function resolveOrFail(host: string, resolve: ResolveHost): Promise<ResolvedAddress[]> {
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolve(host);
  } catch {
    throw new ToolError(`could not resolve the host name "${host}".`);
  }
  if (addresses.length === 0) throw new ToolError(`the host name "${host}" has no addresses.`);
  return addresses;
}

/** A lookup that answers with the already checked addresses only. */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const family = typeof options === 'object' ? options.family : options;
    const usable = addresses.filter((a) => !family || a.family === family);
    const chosen = usable.length ? usable : addresses;
    if (typeof options === 'object' && options.all) {
      (callback as (err: null, list: ResolvedAddress[]) => void)(null, chosen);
    } else {
      callback(null, chosen[0]!.address, chosen[0]!.family);
    }
  };
}

async function requestOnce(url: URL, options: HttpGetOptions): Promise<IncomingMessage> {
  const addresses = await checkedAddresses(url, options);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(url, {
      method: 'GET',
      signal: options.signal,
      headers: { 'user-agent': options.userAgent, accept: 'text/html,text/plain,application/json,*/*;q=0.5', 'accept-encoding': 'gzip, deflate, br' },
      ...(addresses ? { lookup: pinnedLookup(addresses) } : {}),
    });
    request.once('response', resolve);
    request.once('error', (error) => reject(requestError(url, error, options.signal)));
    request.end();
  });
}

function requestError(url: URL, error: Error, signal: AbortSignal): Error {
  if (signal.aborted) return signal.reason instanceof Error ? signal.reason : new ToolError('the request was cancelled.');
  return new ToolError(`could not fetch ${url.origin}: ${error.message}`);
}

async function readBody(url: URL, response: IncomingMessage, options: HttpGetOptions): Promise<HttpGetResult> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of decoded(response)) {
      const buffer = chunk as Buffer;
      if (size + buffer.length > options.maxBytes) {
        chunks.push(buffer.subarray(0, options.maxBytes - size));
        truncated = true;
        break;
      }
      chunks.push(buffer);
      size += buffer.length;
    }
  } catch (error) {
    throw requestError(url, error as Error, options.signal);
  } finally {
    response.destroy();
  }
  return {
    url: url.toString(),
    status: response.statusCode ?? 0,
    statusText: response.statusMessage ?? '',
    contentType: String(response.headers['content-type'] ?? ''),
    body: Buffer.concat(chunks),
    truncated,
  };
}

/** The body stream, decompressed when the server compressed it (bounded by the caller like any other body). */
function decoded(response: IncomingMessage): AsyncIterable<unknown> {
  const encoding = String(response.headers['content-encoding'] ?? '').toLowerCase();
  const decoder = encoding === 'gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : undefined;
  if (!decoder) return response;
  response.on('error', (error) => decoder.destroy(error));
  return response.pipe(decoder);
}
