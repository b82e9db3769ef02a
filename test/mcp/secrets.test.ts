/**
 * MCP secrets: `${VAR}` in env and headers reaches the server while the value
 * is redacted from what the model reads; an unset variable is a clear config
 * error; a config file others can read may not hold a secret literally.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { configuredSecrets } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import { isSecretValue, literalSecretKeys, mcpSecrets } from '../../src/config/mcp-secrets.js';
import { startHostileHttp, type HostileHttp } from '../fakes/mcp/hostile.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { answer, HOSTILE, model, tsServer } from './chat.js';

let rig: AppRig | undefined;
let web: HostileHttp | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  await web?.close();
  web = undefined;
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Writes `config` as YAML with `mode`; returns its path. */
function configFile(config: Record<string, unknown>, mode: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'pincer-mcp-config-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'pincer.yaml');
  writeFileSync(file, stringify(config));
  chmodSync(file, mode);
  return file;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

describe('MCP secrets', () => {
  it('a ${VAR} in env and headers reaches the server, and its value is redacted from the tool result', async () => {
    web = await startHostileHttp();
    const token = 'envtok-7c2e9a41b6d8f035';
    const key = 'hdrkey-3b91f0c7e2a64d58';
    const bearer = 'bearer-a8d3c6e1f4b29075';
    const file = configFile(
      {
        mcp: {
          servers: {
            envy: tsServer(HOSTILE, { HOSTILE_TOKEN: '${PINCER_TEST_MCP_TOKEN}', NOTE: 'plain $${NOT_A_REFERENCE}' }),
            web: { url: web.url, approval: 'never', headers: { 'X-Api-Key': '${PINCER_TEST_MCP_KEY}', Authorization: 'Bearer ${PINCER_TEST_MCP_BEARER}' } },
          },
        },
      },
      0o600,
    );
    const { config } = loadConfig({ PINCER_CONFIG: file, PINCER_TEST_MCP_TOKEN: token, PINCER_TEST_MCP_KEY: key, PINCER_TEST_MCP_BEARER: bearer });
    expect(config.mcp.servers.envy!.env).toMatchObject({ HOSTILE_TOKEN: token, NOTE: 'plain ${NOT_A_REFERENCE}' });
    expect(configuredSecrets(config)).toEqual(expect.arrayContaining([token, key, `Bearer ${bearer}`, bearer]));

    rig = await startAppRig({ responder: model, config: { mcp: config.mcp } });
    const fromEnv = await answer(rig, 'call envy__echo {"names":["HOSTILE_TOKEN"]}', /HOSTILE_TOKEN/);
    expect(fromEnv).toContain(`HOSTILE_TOKEN=[redacted] sha256=${sha256(token)}`);
    expect(fromEnv).not.toContain(token);
    const fromHeaders = await answer(rig, 'call web__echo {"names":["x-api-key","authorization"]}', /x-api-key/);
    expect(fromHeaders).toContain(`x-api-key=[redacted] sha256=${sha256(key)}`);
    expect(fromHeaders).toContain(`sha256=${sha256(`Bearer ${bearer}`)}`);
    expect(fromHeaders).not.toContain(key);
    expect(fromHeaders).not.toContain(bearer);
  }, 60_000);

  it('an unset variable is a config error naming the server, the key and the variable', () => {
    const file = configFile({ mcp: { servers: { search: { url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer ${SEARCH_TOKEN}' } } } } }, 0o600);
    expect(() => loadConfig({ PINCER_CONFIG: file })).toThrow(/mcp\.servers\.search\.headers\.Authorization: \$\{SEARCH_TOKEN\} is not set; set SEARCH_TOKEN in the environment or in \.env/);
    expect(() => loadConfig({ PINCER_CONFIG: file, SEARCH_TOKEN: '' })).toThrow(/SEARCH_TOKEN\} is not set/);
  });

  it('a config file others can read is refused when it holds a literal header secret; 0600, or ${VAR}, is accepted', () => {
    const literal = { mcp: { servers: { search: { url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer literal-secret-9f3a' } } } } };
    const open = configFile(literal, 0o644);
    let message = '';
    try {
      loadConfig({ PINCER_CONFIG: open });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain(`mcp.servers.search.headers.Authorization: ${open} holds this secret as plain text and others may read the file (mode 0644)`);
    expect(message).toContain(`chmod 600 ${open}`);
    expect(message).toContain('${VAR}');
    expect(message).not.toContain('literal-secret-9f3a');
    expect(loadConfig({ PINCER_CONFIG: configFile(literal, 0o600) }).config.mcp.servers.search!.headers.Authorization).toBe('Bearer literal-secret-9f3a');
    const referenced = { mcp: { servers: { search: { url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer ${SEARCH_TOKEN}' } } } } };
    expect(() => loadConfig({ PINCER_CONFIG: configFile(referenced, 0o644), SEARCH_TOKEN: 'from-the-env-1234' })).not.toThrow();
  });

  it('a literal env secret in a group-readable file is refused; plain settings are not secrets', () => {
    const file = configFile({ mcp: { servers: { gh: { command: 'x', env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_literal', LOG_DIR: '/var/log/gh', MODE: 'production' } } } } }, 0o640);
    expect(() => loadConfig({ PINCER_CONFIG: file })).toThrow(/mcp\.servers\.gh\.env\.GITHUB_PERSONAL_ACCESS_TOKEN: .* \(mode 0640\)/);
    expect(() => loadConfig({ PINCER_CONFIG: file })).not.toThrow(/LOG_DIR|MODE/);
  });

  it('tells secrets from plain settings', () => {
    const table: Array<[place: 'env' | 'headers', key: string, value: string, secret: boolean]> = [
      ['headers', 'Authorization', 'Bearer abc', true],
      ['headers', 'X-Custom', 'anything', true],
      ['headers', 'Accept', 'application/json', false],
      ['headers', 'User-Agent', 'pincer', false],
      ['env', 'API_TOKEN', '12345', true],
      ['env', 'DB_PASSWORD', 'plainword', true],
      ['env', 'UPSTREAM', 'Zx81kQp0a7Lm', true],
      ['env', 'UPSTREAM_URL', 'https://user:pw@example.com/', true],
      ['env', 'UPSTREAM_URL', 'https://example.com/api?k=1', true],
      ['env', 'UPSTREAM_URL', 'https://example.com/api', false],
      ['env', 'LOG_LEVEL', 'debug', false],
      ['env', 'LEVEL', 'INFO', false],
      ['env', 'NODE_ENV', 'production', false],
      ['env', 'WORKERS', '4', false],
      ['env', 'VERBOSE', 'true', false],
      ['env', 'DATA_DIR', '/srv/data', false],
      ['env', 'PATH', '/usr/bin:/bin', false],
      ['env', 'EMPTY', '', false],
    ];
    for (const [place, key, value, secret] of table) expect(isSecretValue(place, key, value), `${place}.${key}=${value}`).toBe(secret);
    expect(literalSecretKeys({ mcp: { servers: { a: { env: { T: '${X}', U: 'Zx81kQp0a7Lm' }, headers: { Authorization: 'Bearer ${Y}' } } } } })).toEqual(['mcp.servers.a.env.U']);
    expect(mcpSecrets({ servers: { a: { env: { LOG_LEVEL: 'debug', KEY: 'k3y-value-1234' }, headers: { Authorization: `Basic ${Buffer.from('ada:pa55word-xyz').toString('base64')}` } } } })).toEqual(
      expect.arrayContaining(['k3y-value-1234', 'ada:pa55word-xyz', 'pa55word-xyz']),
    );
  });
});
