/**
 * files_send at the terminal: nothing is uploaded; the file's name, size and
 * path are printed, under its caption.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { TERMINAL_CHAT, TerminalChannel } from '../../../src/channels/terminal/adapter.js';
import { silentLogger } from '../../../src/log.js';

const channels: TerminalChannel[] = [];
afterEach(async () => {
  await Promise.all(channels.splice(0).map((channel) => channel.stop()));
});

describe('TerminalChannel.sendFile', () => {
  it('prints where the file is and its size, with the caption, and uploads no limits', async () => {
    const output = new PassThrough();
    let printed = '';
    output.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
    const channel = new TerminalChannel({ input: new PassThrough(), output, userName: 'ada' }, { log: silentLogger, commands: [], completions: () => [], state: { get: async () => undefined, set: async () => undefined } });
    channels.push(channel);
    await channel.start();
    const sent = await channel.sendFile(TERMINAL_CHAT, {
      name: 'report.pdf',
      bytes: Buffer.alloc(2_048),
      mimeType: 'application/pdf',
      as: 'document',
      caption: 'The Q3 report',
      localPath: '/srv/pincer/workspace/users/terminal/ada/report.pdf',
    });
    expect(sent.ids).toHaveLength(1);
    expect(printed).toContain('The Q3 report');
    expect(printed).toContain('📎 report.pdf (2.0 KB): /srv/pincer/workspace/users/terminal/ada/report.pdf');
    // No upload limits: the files_send tool reports the path as shown, not a photo or document sent.
    expect(channel.capabilities.fileLimits).toBeUndefined();
  });
});
