/**
 * The hostile MCP server over stdio: `node --import tsx test/fakes/mcp/hostile-stdio.ts`,
 * with `HOSTILE_MODE` (see `hostile.ts`) and `HOSTILE_SECRET`.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { hostileServer, type HostileMode } from './hostile.js';

const server = hostileServer({ mode: (process.env.HOSTILE_MODE ?? 'plain') as HostileMode, secret: process.env.HOSTILE_SECRET });
await server.connect(new StdioServerTransport());
