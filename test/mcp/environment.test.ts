/**
 * A stdio server's environment: loader variables are refused in any case, and
 * a PATH or HOME of the server's own is allowed, logged, and reaches it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { McpServerSchema } from '../../src/config/schema.js';
import { isRefusedVariable, serverEnvironment } from '../../src/config/mcp-environment.js';
import { McpServerSource } from '../../src/mcp/server-source.js';
import { capturedLog, HOSTILE, tsServer } from './chat.js';

const REFUSED = [
  'Node_Options',
  'node_path',
  'ld_preload',
  'LD_LIBRARY_PATH',
  'LD_AUDIT',
  'DYLD_INSERT_LIBRARIES',
  'JAVA_TOOL_OPTIONS',
  '_java_options',
  'JDK_JAVA_OPTIONS',
  'CLASSPATH',
  'PythonPath',
  'PYTHONSTARTUP',
  'PYTHONHOME',
  'PYTHONINSPECT',
  'PYTHONWARNINGS',
  'GCONV_PATH',
  'npm_config_node_options',
  'NPM_CONFIG_SCRIPT_SHELL',
  'npm_config_registry',
  'BASH_ENV',
  'BASH_FUNC_ls%%',
  'PERL5OPT',
  'RUBYOPT',
];
const ALLOWED = ['PYTHONUNBUFFERED', 'NODE_ENV', 'NODE_EXTRA_CA_CERTS', 'PATH', 'HOME', 'Path', 'API_TOKEN', 'LOG_LEVEL', 'JAVA_HOME'];

let source: McpServerSource | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await source?.stop();
  source = undefined;
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('a stdio server\'s environment', () => {
  it.each(REFUSED)('refuses %s at config load, naming it', (name) => {
    expect(isRefusedVariable(name)).toBe(true);
    const load = () => parseConfig({ mcp: { servers: { bad: { command: 'x', env: { [name]: 'whatever' } } } } });
    expect(load).toThrow(`mcp.servers.bad.env.${name}: ${name} changes how the server loads code`);
    expect(load).not.toThrow(/whatever/);
  });

  it('accepts ordinary variables', () => {
    for (const name of ALLOWED) expect(isRefusedVariable(name), name).toBe(false);
    expect(() => parseConfig({ mcp: { servers: { ok: { command: 'x', env: Object.fromEntries(ALLOWED.map((name) => [name, '1'])) } } } })).not.toThrow();
  });

  it('is PATH and HOME from pincer unless set in the config, never a loader variable', () => {
    const parent = { PATH: '/usr/bin', HOME: '/home/pincer', OPENAI_API_KEY: 'sk-x' };
    expect(serverEnvironment({ A: '1' }, parent)).toEqual({ PATH: '/usr/bin', HOME: '/home/pincer', A: '1' });
    expect(serverEnvironment({ PATH: '/opt/bin', home: '/srv' }, parent)).toEqual({ PATH: '/opt/bin', home: '/srv' });
    expect(serverEnvironment({ NODE_OPTIONS: '--require x', B: '2' }, parent)).toEqual({ PATH: '/usr/bin', HOME: '/home/pincer', B: '2' });
  });

  it('gives the server a PATH and HOME written in its config, and logs that it does', async () => {
    const home = mkdtempSync(join(tmpdir(), 'pincer-home-'));
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const captured = capturedLog();
    const config = McpServerSchema.parse(tsServer(HOSTILE, { PATH: process.env.PATH!, HOME: home }));
    source = new McpServerSource('own', config, captured.log);
    await source.start();
    expect(source.status().state).toBe('ready');
    const said = captured.lines().find((line) => line.msg === 'MCP server environment sets its own PATH or HOME');
    expect(said).toMatchObject({ level: 40, server: 'own', variables: ['PATH', 'HOME'] });
    const echo = source.tools().find((tool) => tool.name === 'own__echo')!;
    const ctx = { userId: 'test:owner', threadKey: 't', channel: 'test', scope: 'global', approval: { kind: 'chat', chatKind: 'dm' }, signal: new AbortController().signal, log: captured.log } as const;
    expect(await echo.execute({ names: ['HOME'] }, ctx)).toContain(`HOME=${home} `);
  }, 30_000);
});
