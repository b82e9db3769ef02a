/**
 * A small MCP server over stdio for the cases a published server does not
 * cover: a slow tool that notes its cancellation, a tool that kills the
 * server, and one that adds a tool (the server then sends
 * `tools/list_changed`). Run with `node --import tsx test/fakes/mcp/server.ts`.
 * `FIXTURE_LOG`: a file where it appends one line per event (`started`,
 * `began <ms>` when a slow call starts, `cancelled <ms>`), for the tests to read.
 * `FIXTURE_SLOW_LIST`: milliseconds it takes to answer each `tools/list`, as a
 * server under load would.
 */
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const logFile = process.env.FIXTURE_LOG;
const note = (line: string) => {
  if (logFile) appendFileSync(logFile, `${line}\n`);
};

const server = new McpServer({ name: 'pincer-fixture', version: '1.0.0' });

server.registerTool('slow', { description: 'Waits for ms milliseconds, then answers.', inputSchema: { ms: z.number() } }, async ({ ms }, extra) => {
  note(`began ${ms}`);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    extra.signal.addEventListener('abort', () => {
      clearTimeout(timer);
      note(`cancelled ${ms}`);
      resolve();
    });
  });
  return { content: [{ type: 'text', text: `waited ${ms} ms` }] };
});

server.registerTool('crash', { description: 'Ends the server process at once.' }, async () => {
  note('crashing');
  setTimeout(() => process.exit(3), 10);
  return { content: [{ type: 'text', text: 'crashing' }] };
});

server.registerTool('add_tool', { description: 'Adds the tool "added".' }, async () => {
  server.registerTool('added', { description: 'A tool that appeared later.' }, async () => ({ content: [{ type: 'text', text: 'the added tool ran' }] }));
  return { content: [{ type: 'text', text: 'added the tool "added"' }] };
});

server.registerTool('env', { description: 'The names of the environment variables it got.' }, async () => ({
  content: [{ type: 'text', text: Object.keys(process.env).sort().join(',') }],
}));

const slowList = Number(process.env.FIXTURE_SLOW_LIST ?? 0);
const transport = new StdioServerTransport();
note('started');
await server.connect(transport);
if (slowList > 0) {
  // Each tools/list waits before it is handled; other messages pass at once, in order.
  const handle = transport.onmessage!;
  transport.onmessage = (message) => {
    if ('method' in message && message.method === 'tools/list') setTimeout(() => handle(message), slowList);
    else handle(message);
  };
}
