/**
 * What `pincer start` tells its operator about who can reach what: a channel
 * that admits everyone is named in a warning, and files of the one workspace
 * older versions shared are left in place with a notice saying how to give
 * them to someone or share them. The built program, against the Telegram fake.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, textReply, type FakeLlm } from '../fakes/llm/server.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { ensureBuilt } from '../e2e/build.js';
import { cleanUp, startPincer, tempDir, type PincerProcess } from '../e2e/pincer.js';
import { OWNER } from '../e2e/telegram.js';

let llm: FakeLlm | undefined;
let telegram: FakeTelegram | undefined;

beforeAll(() => ensureBuilt(), 130_000);
afterEach(async () => {
  await cleanUp();
  await Promise.all([llm?.close(), telegram?.close()]);
  llm = telegram = undefined;
});

/** A bot on the Telegram fake, with `config` as its config file. */
async function startBot(config: string, dataDir = tempDir()): Promise<PincerProcess> {
  llm = await startFakeLlm({ responder: () => textReply('hi') });
  telegram = await startFakeTelegram();
  const file = join(tempDir('pincer-start-config-'), 'pincer.yaml');
  writeFileSync(file, config);
  const pincer = startPincer(
    {
      OPENAI_BASE_URL: llm.url,
      PINCER_MODEL: 'fake-model',
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      PINCER_OWNERS: `telegram:${OWNER.id}`,
      PINCER_CONFIG: file,
    },
    { dataDir },
  );
  await pincer.waitForOutput('pincer is running', 20_000);
  return pincer;
}

/** The warnings of the JSON log (stderr, no TTY). */
function warnings(pincer: PincerProcess): Array<{ msg: string; channel?: string }> {
  return pincer
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string; channel?: string })
    .filter((line) => line.level === 40);
}

describe('pincer start', () => {
  it('warns, naming the channel, when a channel admits everyone', async () => {
    const pincer = await startBot('telegram:\n  allowedUsers: []\n');
    const open = warnings(pincer).find((line) => line.channel === 'telegram');
    expect(open?.msg, pincer.output()).toMatch(/^telegram admits everyone: telegram\.allowedUsers is empty/);
    expect(open?.msg).toContain('list who may use it in telegram.allowedUsers');
  }, 60_000);

  it('says nothing of the kind when the channel has a user allowlist', async () => {
    const pincer = await startBot(`telegram:\n  allowedUsers: [${OWNER.id}]\n`);
    expect(warnings(pincer).filter((line) => /admits everyone/.test(line.msg))).toEqual([]);
  }, 60_000);

  it('leaves the files of the old shared workspace where they are, and says how to give them out or share them', async () => {
    const dataDir = tempDir();
    const old = join(dataDir, 'workspace');
    mkdirSync(join(old, 'notes'), { recursive: true });
    writeFileSync(join(old, 'notes', 'todo.txt'), 'buy milk');
    const pincer = await startBot(`telegram:\n  allowedUsers: [${OWNER.id}]\n`, dataDir);
    const notice = warnings(pincer).find((line) => line.msg.includes('before workspaces were per person'));
    expect(notice?.msg, pincer.output()).toContain('(notes)');
    expect(notice?.msg).toContain(`telegram:${OWNER.id}'s is ${join(old, 'users', 'telegram', String(OWNER.id))}`);
    expect(notice?.msg).toContain(`tools.files.shared: [{ name: old, path: ${old} }]`);
    expect(readFileSync(join(old, 'notes', 'todo.txt'), 'utf8')).toBe('buy milk');
  }, 60_000);
});
