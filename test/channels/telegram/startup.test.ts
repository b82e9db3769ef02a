/**
 * Start-up against a Bot API root that refuses connections: the operator is
 * warned about the Bot API at that address, and why it cannot be reached.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TelegramChannel } from '../../../src/channels/telegram/adapter.js';
import { TelegramConfigSchema } from '../../../src/config/schema.js';
import { waitFor } from '../../fakes/telegram/index.js';
import { capturingLogger, FAST_OPTIONS, testDeps } from './helpers.js';
import { closedPort } from '../../support/ports.js';

let channel: TelegramChannel | undefined;
let starting: Promise<unknown> | undefined;
afterEach(async () => {
  await channel?.stop();
  await starting;
  channel = undefined;
});

/** Starts a channel against a refused address; returns its address and the JSON log lines. */
async function startRefused(): Promise<{ apiRoot: string; warnings: () => Array<Record<string, unknown>> }> {
  const apiRoot = `http://127.0.0.1:${await closedPort()}`;
  const lines: string[] = [];
  const token = '123456:AAFnot-a-real-token';
  const config = TelegramConfigSchema.parse({ token, apiRoot });
  // As in production: the process logger knows the configured credentials.
  channel = new TelegramChannel(config, testDeps({ log: capturingLogger(lines, [token]) }), FAST_OPTIONS);
  starting = channel.start().catch((error: unknown) => error);
  const warnings = () =>
    lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => Number(line.level) >= 40);
  return { apiRoot, warnings };
}

describe('Telegram start-up with an unreachable Bot API', () => {
  it('warns that the Bot API at the configured address does not answer', async () => {
    const { apiRoot, warnings } = await startRefused();
    const warning = await waitFor(() => warnings().find((line) => /Bot API/.test(String(line.msg))), 15_000, 'a warning about the Bot API');
    expect(JSON.stringify(warning)).toContain(apiRoot);
    expect(JSON.stringify(warnings())).not.toContain('AAFnot-a-real-token');
  }, 20_000);

  it('says why the Bot API cannot be reached: the connection is refused', async () => {
    const { warnings } = await startRefused();
    const warning = await waitFor(() => warnings().find((line) => /Bot API/.test(String(line.msg))), 15_000, 'a warning about the Bot API');
    expect(JSON.stringify(warning)).toMatch(/ECONNREFUSED|connection refused/i);
  }, 20_000);
});
