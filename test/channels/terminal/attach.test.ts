/**
 * `/attach PATH [message]` at the terminal: the file goes with the message on
 * the same line, or with the next message typed; quoted paths may hold
 * spaces; a missing file is said at once and nothing is sent.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseAttachArgs, readLocalAttachment } from '../../../src/channels/terminal/attach.js';
import { TerminalChannel } from '../../../src/channels/terminal/adapter.js';
import type { InboundEvent, InboundMessage } from '../../../src/channels/types.js';
import { silentLogger } from '../../../src/log.js';

const folder = mkdtempSync(join(tmpdir(), 'pincer-attach-test-'));
const notes = join(folder, 'my notes.md');
writeFileSync(notes, '# Notes\nThe word is pelican.\n');

afterAll(() => rmSync(folder, { recursive: true, force: true }));

const channels: TerminalChannel[] = [];
afterEach(async () => {
  await Promise.all(channels.splice(0).map((channel) => channel.stop()));
});

async function terminal() {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = '';
  output.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
  const channel = new TerminalChannel({ input, output, userName: 'ada' }, { log: silentLogger, commands: [], completions: () => [], state: { get: async () => undefined, set: async () => undefined } });
  channels.push(channel);
  await channel.start();
  const events = channel.events()[Symbol.asyncIterator]();
  return {
    channel,
    type: (line: string) => input.write(`${line}\n`),
    next: async (): Promise<InboundEvent> => (await events.next()).value as InboundEvent,
    printed: () => printed,
  };
}

describe('parseAttachArgs', () => {
  it.each([
    ['notes.md', { path: 'notes.md', text: '' }],
    ['notes.md sum this up', { path: 'notes.md', text: 'sum this up' }],
    ['"my notes.md" sum this up', { path: 'my notes.md', text: 'sum this up' }],
    ["'my notes.md'", { path: 'my notes.md', text: '' }],
    ['', undefined],
  ])('%j', (args, expected) => {
    expect(parseAttachArgs(args)).toEqual(expected);
  });
});

describe('/attach at the terminal', () => {
  it('sends the file with the message typed after the path on the same line', async () => {
    const t = await terminal();
    t.type(`/attach "${notes}" what does it say?`);
    const event = (await t.next()) as InboundMessage;
    expect(event).toMatchObject({ type: 'message', text: 'what does it say?' });
    expect(event.attachments).toEqual([{ kind: 'document', name: 'my notes.md', sizeBytes: 29, url: expect.stringMatching(/^file:\/\//) }]);
    const bytes = await t.channel.fetchAttachment(event.attachments[0]!, { maxBytes: 1024, signal: AbortSignal.timeout(5_000) });
    expect(Buffer.from(bytes).toString()).toContain('pelican');
  });

  it('without a message, keeps the file for the next message typed', async () => {
    const t = await terminal();
    t.type(`/attach "${notes}"`);
    t.type('summarise it');
    const event = (await t.next()) as InboundMessage;
    expect(event).toMatchObject({ text: 'summarise it', attachments: [{ name: 'my notes.md' }] });
    expect(t.printed()).toContain('my notes.md will go with your next message.');
    t.type('and this one has none');
    expect(((await t.next()) as InboundMessage).attachments).toEqual([]);
  });

  it('says when the file does not exist, and sends nothing', async () => {
    const t = await terminal();
    t.type('/attach /no/such/file.txt hello');
    t.type('next');
    expect(await t.next()).toMatchObject({ text: 'next', attachments: [] });
    expect(t.printed()).toContain('/no/such/file.txt: no such file.');
  });

  it('a file larger than the limit is refused as too big', async () => {
    const failure = await readLocalAttachment({ kind: 'document', name: 'n', url: pathToFileURL(notes).href }, { maxBytes: 5, signal: AbortSignal.timeout(5_000) }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ reason: 'too-big', limitBytes: 5 });
  });
});
