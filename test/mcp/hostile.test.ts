/**
 * A hostile MCP server is bounded: a tool listing that never ends and a storm
 * of change notifications fail the server with the reason while the bot works
 * on; descriptions are cut and oversized schemas skipped; what a server says
 * when a call fails reaches the model wrapped, redacted, defused and cut, like
 * any tool output.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { McpLimitsSchema, McpServerSchema } from '../../src/config/schema.js';
import { McpServerSource } from '../../src/mcp/server-source.js';
import { INJECTION_REMOVED } from '../../src/safety/injection.js';
import { UNTRUSTED_NOTICE } from '../../src/safety/wrap.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { ada, answer, capturedLog, dm, HOSTILE, lastToolResult, model, offered, serverStatus, texts, tsServer } from './chat.js';

let rig: AppRig | undefined;
let source: McpServerSource | undefined;
afterEach(async () => {
  await source?.stop();
  source = undefined;
  await rig?.close();
  rig = undefined;
});

const SECRET = 'hostile-secret-5f0c1a9e7d3b';

describe('a hostile MCP server', () => {
  it('whose tools/list never ends is failed with the reason, shown by /mcp; the bot and the other servers work on', async () => {
    rig = await startAppRig({
      responder: model,
      config: { mcp: { servers: { endless: tsServer(HOSTILE, { HOSTILE_MODE: 'endless-pages' }), calm: tsServer(HOSTILE) } } },
    });
    expect(serverStatus(rig, 'endless')).toMatchObject({ state: 'failed', tools: 0, lastError: expect.stringMatching(/more than 20 pages/) });
    expect(offered(rig).some((name) => name.startsWith('endless__'))).toBe(false);
    expect(offered(rig)).toContain('calm__echo');
    await answer(rig, 'just chatting', /^ok$/);
    const ran = await answer(rig, 'call calm__echo {"names":["HOSTILE_MODE"]}', /^result: /);
    expect(ran).toContain('HOSTILE_MODE= ');
    rig.platform.channel.command({ chat: dm, sender: ada, name: 'mcp', args: '' });
    await rig.platform.waitFor(() => texts(rig!).some((t) => /• endless: failed.*last error: tools\/list had more than 20 pages/.test(t)), 5_000, 'the /mcp status');
  }, 60_000);

  it('that floods tools/list_changed is failed with the reason; the bot works on', async () => {
    rig = await startAppRig({ responder: model, config: { mcp: { servers: { storm: tsServer(HOSTILE, { HOSTILE_MODE: 'storm' }) } } } });
    await rig.platform.waitFor(
      () => /more than 30 tools\/list_changed notifications in a minute/.test(serverStatus(rig!, 'storm')?.lastError ?? ''),
      15_000,
      'the server failed for its storm',
    );
    await answer(rig, 'just chatting', /^ok$/);
  }, 60_000);

  for (const tool of ['fail', 'throw']) {
    it(`has its ${tool === 'fail' ? 'error result' : 'protocol error'} reach the model wrapped, redacted, defused and cut`, async () => {
      rig = await startAppRig({ responder: model, config: { mcp: { servers: { bad: tsServer(HOSTILE, { HOSTILE_SECRET: SECRET }) } } } });
      await answer(rig, `call bad__${tool}`, /^result: /);
      const read = lastToolResult(rig);
      expect(read).toMatch(/^Error: the MCP server bad reported an error/);
      expect(read).toContain(`<tool_output tool="bad__${tool}">\n${UNTRUSTED_NOTICE}`);
      expect(read.trimEnd().endsWith('</tool_output>')).toBe(true);
      expect(read.match(/<\/tool_output>/g)).toHaveLength(1);
      expect(read).not.toContain(SECRET);
      expect(read).toContain('[redacted]');
      expect(read).not.toMatch(/ignore all previous instructions/i);
      expect(read).toContain(INJECTION_REMOVED);
      expect(read).not.toContain('<|im_start|>');
      expect(read).not.toContain('<tool_call>');
      expect(read).toMatch(/output truncated/);
      expect(read.length).toBeLessThanOrEqual(2_000);
    }, 60_000);
  }

  it('has long descriptions cut and a tool with an oversized schema skipped with a logged reason', async () => {
    const captured = capturedLog();
    source = new McpServerSource('big', McpServerSchema.parse(tsServer(HOSTILE, { HOSTILE_MODE: 'huge' })), captured.log);
    await source.start();
    expect(source.status()).toMatchObject({ state: 'ready', tools: 2 });
    expect(source.tools().map((t) => t.name)).toEqual(['big__fine', 'big__long_description']);
    const long = source.tools().find((t) => t.name === 'big__long_description')!;
    expect(long.description.length).toBeLessThan(1_200);
    expect(long.description).not.toMatch(/ignore all previous instructions/i);
    const skipped = captured.lines().find((line) => line.msg === 'MCP tool skipped');
    expect(skipped).toMatchObject({ server: 'big', tool: 'huge_schema', reason: expect.stringMatching(/input schema has \d+ characters, more than 20000/) });
  }, 30_000);

  it('listing more tools than allowed is failed with the reason', async () => {
    const limits = McpLimitsSchema.parse({ maxTools: 2 });
    source = new McpServerSource('many', McpServerSchema.parse(tsServer(HOSTILE, { HOSTILE_MODE: 'huge' })), capturedLog().log, '0.0.0', { limits });
    await source.start();
    expect(source.status()).toMatchObject({ state: 'failed', tools: 0, lastError: expect.stringMatching(/listed more than 2 tools/) });
  }, 30_000);
});
