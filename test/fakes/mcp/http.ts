/**
 * An MCP server over HTTP on 127.0.0.1, built on the published SDK's
 * `McpServer`, for what a user configures on an HTTP server: which tools are
 * offered, the headers it receives, and the transport it speaks. It speaks
 * streamable HTTP (stateless), or, as `sse`, only the older SSE transport: a
 * POST to its URL is refused, as such servers do, and a GET opens the event
 * stream.
 *
 * Its tools: `alpha`, `beta`, `gamma` (each answers `ran <name>`), `say`
 * (answers `text` repeated `times` times, between `head` and `tail`) and `leak` (answers a text holding
 * the secrets it was started with). Every request's headers are kept, and
 * `calls` is told when a call's handler starts.
 */
import { EventEmitter } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** How the server is reached. */
export type HttpMcpTransport = 'streamable-http' | 'sse';

/** What {@link startHttpMcp} takes. */
export interface HttpMcpOptions {
  transport?: HttpMcpTransport;
  /** Put into the answer of `leak`. */
  secrets?: string[];
}

/** A running server. */
export interface HttpMcp {
  /** The URL to configure (`/mcp`). */
  url: string;
  /** The method, path and headers of every HTTP request it got, in order. */
  requests: Array<{ method: string; path: string; headers: IncomingHttpHeaders }>;
  /** Emits `started` with the tool's name when a call's handler begins. */
  calls: EventEmitter;
  close(): Promise<void>;
}

function mcpServer(options: HttpMcpOptions, calls: EventEmitter): McpServer {
  const server = new McpServer({ name: 'pincer-http-fixture', version: '1.0.0' });
  const started = (name: string) => calls.emit('started', name);
  for (const name of ['alpha', 'beta', 'gamma']) {
    server.registerTool(name, { description: `The tool ${name}.` }, () => {
      started(name);
      return { content: [{ type: 'text', text: `ran ${name}` }] };
    });
  }
  const sayInput = { text: z.string(), times: z.number().optional(), head: z.string().optional(), tail: z.string().optional() };
  server.registerTool('say', { description: 'Answers text repeated times times, between head and tail.', inputSchema: sayInput }, ({ text, times, head, tail }) => {
    started('say');
    return { content: [{ type: 'text', text: `${head ?? ''}${text.repeat(times ?? 1)}${tail ?? ''}` }] };
  });
  server.registerTool('leak', { description: 'Answers a text holding secrets.' }, () => {
    started('leak');
    return { content: [{ type: 'text', text: (options.secrets ?? []).map((secret) => `the key is ${secret}.`).join('\n') || 'no secrets' }] };
  });
  return server;
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startHttpMcp(options: HttpMcpOptions = {}): Promise<HttpMcp> {
  const calls = new EventEmitter();
  const requests: HttpMcp['requests'] = [];
  const sessions = new Map<string, SSEServerTransport>();
  const streamable = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') return refuse(res, 405);
    const server = mcpServer(options, calls);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  };
  const sse = (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (req.method === 'GET' && path === '/mcp') {
      const transport = new SSEServerTransport('/messages', res);
      sessions.set(transport.sessionId, transport);
      res.on('close', () => sessions.delete(transport.sessionId));
      void mcpServer(options, calls).connect(transport);
      return;
    }
    const session = sessions.get(new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId') ?? '');
    if (req.method === 'POST' && path === '/messages' && session) return void session.handlePostMessage(req, res);
    // An old server knows nothing of streamable HTTP: a POST to its URL is refused.
    refuse(res, req.method === 'POST' ? 405 : 404);
  };
  const http = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ method: req.method ?? '', path, headers: req.headers });
    if (options.transport === 'sse') sse(req, res, path);
    else streamable(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

function refuse(res: ServerResponse, status: number): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }));
}
