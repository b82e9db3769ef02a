/**
 * The `http_fetch` tool: GETs a public web page or API and returns its text
 * (HTML converted to plain text). Private and local addresses are refused
 * (see lib/address-policy.ts); size and time are bounded by `tools.http`.
 */
import { z } from 'zod';
import { ToolError } from '../../errors.js';
import type { Tool } from '../types.js';
import { systemResolve, type ResolveHost } from './lib/address-policy.js';
import { checkTarget, guardedGet, type HttpGetResult } from './lib/http-get.js';

const parameters = z.object({
  url: z.string().min(1).max(2048).describe('The http(s) URL to GET'),
});

/** Settings of the fetch tool (config `tools.http`). */
export interface HttpFetchOptions {
  allowHosts: readonly string[];
  maxBytes: number;
  timeoutMs: number;
  resolve?: ResolveHost;
}

/** Redirects followed by hand (each one checked). */
export const MAX_REDIRECTS = 5;

/** Creates the http_fetch tool. */
export function httpFetchTool(options: HttpFetchOptions): Tool<typeof parameters> {
  return {
    name: 'http_fetch',
    description:
      'Fetch a public web page or API with HTTP GET and return its text (HTML is converted to plain text). ' +
      'Private and local network addresses are refused.',
    parameters,
    readOnly: false,
    requiresApproval: () => 'unlessAutoApproved',
    // The tool's own timer ends the request first, with a clearer message.
    timeoutMs: options.timeoutMs + 5_000,
    describe: ({ url }) => `Fetch ${url} (HTTP GET)`,
    // A refused address is refused before anyone is asked to approve the fetch.
    precheck: ({ url }) => checkTarget(url, { allowHosts: options.allowHosts, resolve: options.resolve ?? systemResolve }),
    async execute({ url }, ctx) {
      const timeout = AbortSignal.timeout(options.timeoutMs);
      const signal = AbortSignal.any([ctx.signal, timeout]);
      try {
        const result = await guardedGet(url, {
          allowHosts: options.allowHosts,
          maxBytes: options.maxBytes,
          maxRedirects: MAX_REDIRECTS,
          resolve: options.resolve ?? systemResolve,
          signal,
          userAgent: 'pincer-http-fetch/1.0',
        });
        return await render(result, options.maxBytes);
      } catch (error) {
        if (timeout.aborted && !ctx.signal.aborted) throw new ToolError(`fetching ${url} took longer than ${options.timeoutMs / 1000} s.`);
        throw error;
      }
    },
  };
}

async function render(result: HttpGetResult, maxBytes: number): Promise<string> {
  const header = [`URL: ${result.url}`, `Status: ${result.status} ${result.statusText}`.trim(), `Content-Type: ${result.contentType || 'unknown'}`];
  if (result.truncated) header.push(`Note: the body was cut at ${maxBytes} bytes.`);
  return `${header.join('\n')}\n\n${await bodyText(result)}`;
}

async function bodyText(result: HttpGetResult): Promise<string> {
  const type = result.contentType.toLowerCase();
  if (!isTextual(type, result.body)) return `[binary content, ${result.body.length} bytes, not shown]`;
  const text = decode(result.body, charsetOf(type));
  if (type.includes('html') || (!type && /^\s*<(!doctype html|html)/i.test(text))) {
    // The converter loads on the first page fetched, not at start.
    const { convert } = await import('html-to-text');
    return convert(text, { wordwrap: false, selectors: [{ selector: 'img', format: 'skip' }] });
  }
  return text;
}

function isTextual(type: string, body: Buffer): boolean {
  if (/^text\/|json|xml|javascript|html|csv|yaml/.test(type)) return true;
  if (type && !type.startsWith('application/octet-stream')) return false;
  return !body.subarray(0, 4096).includes(0);
}

function charsetOf(type: string): string {
  return /charset=["']?([\w-]+)/.exec(type)?.[1] ?? 'utf-8';
}

function decode(body: Buffer, charset: string): string {
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}
