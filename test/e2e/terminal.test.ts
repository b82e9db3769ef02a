/**
 * The built product on a pseudo-terminal with only the model configured: the
 * terminal channel starts by itself, a user chats, answers an approval with
 * `y`, and quits with Ctrl+D.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { visibleLines } from '../channels/terminal/virtual-screen.js';
import { startFakeLlm, textReply, toolCallReply, type FakeLlm } from '../fakes/llm/server.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { ensureBuilt } from './build.js';
import { replyTo, respond, textOf } from './model.js';
import { cleanUp, tempDir, waitUntil } from './pincer.js';
import { hasScript, KEYS, killPty, ptyEnv, startOnPty, type PtyRun } from './pty.js';
import { OWNER } from './telegram.js';

const API_KEY = 'sk-e2e-terminal-0123456789SECRET';

let llm: FakeLlm | undefined;
let telegram: FakeTelegram | undefined;

beforeAll(() => ensureBuilt(), 130_000);

afterEach(async () => {
  await killPty();
  await Promise.all([llm?.close(), telegram?.close()]);
  llm = telegram = undefined;
  await cleanUp();
});

describe.skipIf(!hasScript)('terminal channel on a pseudo-terminal', () => {
  it('chats, runs an approved files_write after y, and ends with exit code 0 on Ctrl+D', async () => {
    llm = await startFakeLlm({ responder: respond, apiKey: API_KEY });
    const dataDir = tempDir();
    const terminal = startOnPty({
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      TERM: 'xterm-256color',
      PINCER_DATA_DIR: dataDir,
      PINCER_LOG_LEVEL: 'info',
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: API_KEY,
      PINCER_MODEL: 'fake-model',
    });
    await terminal.see('Ctrl+D to quit');

    terminal.type('hello terminal\r');
    await terminal.see(replyTo('hello terminal'));

    terminal.type('please write a note\r');
    await terminal.see('Approve? [y]es / [n]o / [a]lways:');
    expect(terminal.screen()).toContain('files_write');
    // The person at the keyboard (terminal:owner) has a workspace of their own.
    const note = join(dataDir, 'workspace', 'users', 'terminal', 'owner', 'note.txt');
    expect(existsSync(note)).toBe(false);
    terminal.type('y\r');
    await terminal.see('Wrote 2 bytes to note.txt');
    expect(readFileSync(note, 'utf8')).toBe('hi');

    terminal.type('\x04');
    const code = await terminal.exitWithin(8_000);
    expect(code, terminal.screen()).toBe(0);
    expect(terminal.screen()).not.toContain(API_KEY);
  }, 45_000);

  it('keeps log lines off the screen, shows a streamed answer once, re-asks after a typo and shows a slow approved tool\'s progress', async () => {
    llm = await startFakeLlm({ responder: respond, apiKey: API_KEY });
    const slow = createServer((_request, response) => setTimeout(() => response.end('slow page'), 3_500));
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/page`;
    const dataDir = tempDir();
    const configFile = join(tempDir(), 'pincer.yaml');
    writeFileSync(configFile, 'tools:\n  http:\n    allowHosts: ["127.0.0.1"]\n');
    try {
      const terminal = startOnPty({
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        TERM: 'xterm-256color',
        PINCER_DATA_DIR: dataDir,
        PINCER_CONFIG: configFile,
        PINCER_LOG_LEVEL: 'debug',
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: API_KEY,
        PINCER_MODEL: 'fake-model',
      });
      await terminal.see('Ctrl+D to quit');
      await terminal.see('logs go to');

      terminal.type('stream please\r');
      await terminal.see('Streamed sentence 8 of the answer.');
      // The terminal writes in order: the answer printed again would come before the reply to the next message.
      terminal.type('marker please\r');
      await terminal.see(replyTo('marker please'));
      expect(terminal.screen().split("Streamed sentence 1 of").length - 1, JSON.stringify(terminal.screen())).toBe(1);

      terminal.type(`fetch ${url}\r`);
      await terminal.see('Approve? [y]es / [n]o / [a]lways:');
      terminal.type('yy\r');
      await terminal.see('"yy" is not an answer');
      terminal.type('y\r');
      await waitUntil(() => /Running .?http_fetch.?… \d+ s/.test(terminal.screen()), 10_000, () => `the progress line on screen:\n${terminal.screen()}`);
      await terminal.see('Done: ');

      // Log lines went to the file, not to the screen.
      const screen = terminal.screen();
      expect(screen).not.toMatch(/"level":|\bINFO\b|\bDEBUG\b|channel started/);
      const log = readFileSync(join(dataDir, 'logs', 'pincer.log'), 'utf8');
      expect(log).toContain('channel started');
      expect(log).not.toContain(API_KEY);
      terminal.type('\x04');
      expect(await terminal.exited).toBe(0);
    } finally {
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    }
  }, 60_000);
});



/** The model and a fake Bot API, for a terminal beside a Telegram bot. */
async function startTelegramAndModel(): Promise<FakeTelegram> {
  llm = await startFakeLlm({ responder: respond, apiKey: API_KEY });
  return (telegram = await startFakeTelegram());
}

/** The product on a pty with the model, and Telegram when `fake` is given, configured as a newcomer would. */
function startWith(model: FakeLlm, extra: Record<string, string> = {}, fake?: FakeTelegram): PtyRun {
  const channel: Record<string, string> = fake ? { TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot, PINCER_OWNERS: `telegram:${OWNER.id}` } : {};
  return startOnPty(ptyEnv({ PINCER_DATA_DIR: tempDir(), OPENAI_BASE_URL: model.url, OPENAI_API_KEY: API_KEY, PINCER_MODEL: 'fake-model', ...channel, ...extra }));
}

describe.skipIf(!hasScript)('terminal channel beside Telegram', () => {
  it.each([
    ['Ctrl+D', KEYS.ctrlD],
    ['a second Ctrl+C', KEYS.ctrlC + KEYS.ctrlC],
  ])('shuts the whole program down on %s, as it does with the terminal alone', async (_keys, keys) => {
    const fake = await startTelegramAndModel();
    const terminal = startWith(llm!, {}, fake);
    await terminal.see('logs go to');
    terminal.type(`hello${KEYS.enter}`);
    await terminal.see(replyTo('hello'));
    terminal.type(keys);
    expect(await terminal.exitWithin(10_000), terminal.screen()).toBe(0);
  }, 45_000);

  it('keeps a line typed while the bot is still starting whole on its prompt line, and answers it', async () => {
    const fake = await startTelegramAndModel();
    // Telegram asks to wait before it answers getMe: the bot takes two seconds more to start.
    fake.failNext('getMe', { error_code: 429, description: 'Too Many Requests: retry after 2', retry_after: 2 });
    const terminal = startWith(llm!, {}, fake);
    await terminal.see('Ctrl+D to quit');
    terminal.type('hel');
    await terminal.see('logs go to');
    terminal.type(`lo${KEYS.enter}`);
    await terminal.see(replyTo('hello'));
    const lines = visibleLines(terminal.raw(), 120);
    expect(lines, lines.join('\n')).toContain('> hello');
    expect(lines.filter((line) => line.includes('running with fake-model')), lines.join('\n')).toEqual([expect.stringMatching(/^pincer: running with fake-model on .*; logs go to /)]);
  }, 45_000);
});

describe.skipIf(!hasScript)('terminal channel: what a slow tool and a background job print', () => {
  it('shows an approval prompt styled, without stray escape codes, and the tools used above the answer they led to', async () => {
    llm = await startFakeLlm({
      apiKey: API_KEY,
      responder: (request) =>
        request.messages.at(-1)?.role === 'user' && /slow command/.test(textOf(request.messages.at(-1)!))
          ? toolCallReply([{ name: 'shell', arguments: { command: 'sleep 2.5; echo finished' } }])
          : respond(request),
    });
    const configFile = join(tempDir(), 'pincer.yaml');
    writeFileSync(configFile, 'tools:\n  shell:\n    enabled: true\n');
    const terminal = startWith(llm, { PINCER_CONFIG: configFile });
    await terminal.see('logs go to');
    terminal.type(`run the slow command${KEYS.enter}`);
    await terminal.see('Approve? [y]es / [n]o:');
    // The headline is bold on screen: its codes arrive whole, none shows as text.
    expect(terminal.raw()).toContain('\x1b[1mApproval needed: shell\x1b[22m');
    expect(terminal.screen()).not.toMatch(/\[(1|2|22)m/);
    terminal.type(`y${KEYS.enter}`);
    await terminal.see('⚙️ Running shell…');
    await terminal.see('Done: ');
    await terminal.see('⚙️ Used shell');
    const lines = visibleLines(terminal.raw(), 120);
    const used = lines.findIndex((line) => line.includes('⚙️ Used shell'));
    expect(used, lines.join('\n')).toBeGreaterThan(-1);
    expect(used, lines.join('\n')).toBeLessThan(lines.findIndex((line) => line.includes('Done: ')));
    expect(linesWith(lines, '⚙️')).toHaveLength(1);
  }, 45_000);

  it('prints one line when a background job finishes, also after a chat while it ran', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    llm = await startFakeLlm({
      apiKey: API_KEY,
      responder: async (request) => {
        // The job's own model call answers once the test has chatted meanwhile.
        if (textOf(request.messages[0]!).includes('DONE:')) return released.then(() => textReply('DONE: counted to three'));
        const last = request.messages.at(-1)!;
        if (last.role === 'user' && /start a job/.test(textOf(last))) return toolCallReply([{ name: 'create_job', arguments: { title: 'count', goal: 'count to three', tools: [] } }]);
        return respond(request);
      },
    });
    const terminal = startWith(llm);
    await terminal.see('logs go to');
    terminal.type(`start a job${KEYS.enter}`);
    await terminal.see('Approve? [y]es / [n]o / [a]lways:');
    terminal.type(`y${KEYS.enter}`);
    await terminal.see('Done: ');
    terminal.type(`hello meanwhile${KEYS.enter}`);
    await terminal.see(replyTo('hello meanwhile'));
    release();
    await terminal.see('counted to three');
    terminal.type(`and after${KEYS.enter}`);
    await terminal.see(replyTo('and after'));
    const lines = visibleLines(terminal.raw(), 120);
    expect(linesWith(lines, '✅ Job'), lines.join('\n')).toEqual([expect.stringMatching(/^pincer: ✅ Job \w+ "count" is done\.$/)]);
  }, 45_000);
});

/** The lines among `lines` that hold `text`. */
function linesWith(lines: string[], text: string): string[] {
  return lines.filter((line) => line.includes(text));
}
