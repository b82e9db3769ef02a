import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { TERMINAL_CAPABILITIES, TERMINAL_CHAT, TerminalChannel } from '../../src/channels/terminal/adapter.js';
import { TurnPresenter } from '../../src/chat/presenter.js';
import { Outbox } from '../../src/engine/outbox.js';
import { silentLogger } from '../../src/log.js';

const channels: TerminalChannel[] = [];
afterEach(async () => {
  await Promise.all(channels.splice(0).map((channel) => channel.stop()));
});

/** A presenter over a started terminal channel whose output is a pipe (not a TTY), with what it printed. */
async function pipedTerminal() {
  const output = new PassThrough();
  let printed = '';
  output.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
  const channel = new TerminalChannel(
    { input: new PassThrough(), output, userName: 'ada', color: false },
    { log: silentLogger, commands: [], completions: () => [], state: { get: async () => undefined, set: async () => undefined } },
  );
  channels.push(channel);
  await channel.start();
  const outbox = new Outbox(new Map([[channel.name, channel]]), (text) => text, silentLogger);
  const presenter = new TurnPresenter(outbox, { ...TERMINAL_CHAT }, TERMINAL_CAPABILITIES, { statusDelayMs: 0, streamDelayMs: 1_500, streamMinChars: 200 });
  return { presenter, printed: () => printed };
}

async function waitFor(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('TurnPresenter on a terminal whose output is not a TTY', () => {
  it('prints the tools used before the answer they led to', async () => {
    const { presenter, printed } = await pipedTerminal();
    presenter.start();
    presenter.beginReply();
    await presenter.endReplyWithTools();
    presenter.toolsStarted(['shell']);
    await waitFor(() => printed().includes('⚙️ Running `shell`'));
    presenter.toolsFinished();
    presenter.beginReply();
    await presenter.finish('Done: it printed hello.');
    // The old order settled the status line after the answer, without waiting for it.
    await waitFor(() => printed().includes('⚙️ Used `shell`')).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));

    const lines = printed().split('\n').filter(Boolean);
    expect(lines, printed()).toEqual(['pincer: ⚙️ Running `shell`…', 'pincer: ⚙️ Used `shell`', 'pincer: Done: it printed hello.']);
  });
});
