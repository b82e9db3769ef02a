import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { TERMINAL_CHAT, TerminalChannel, type TerminalChannelOptions } from '../../../src/channels/terminal/adapter.js';
import { IN_PROGRESS_MARK, type ApprovalPrompt, type ChannelDeps, type InboundEvent } from '../../../src/channels/types.js';
import { ChannelError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log.js';

function deps(): ChannelDeps {
  return {
    log: silentLogger,
    commands: [],
    completions: () => [],
    state: { get: async () => undefined, set: async () => undefined },
  };
}

const channels: TerminalChannel[] = [];
afterEach(async () => {
  await Promise.all(channels.splice(0).map((channel) => channel.stop()));
});

/** A started channel over in-memory streams, with helpers to type and to read what was printed. */
async function terminal(options: Partial<TerminalChannelOptions> = {}) {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = '';
  output.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
  const channel = new TerminalChannel({ input, output, userName: 'ada', ...options }, deps());
  channels.push(channel);
  await channel.start();
  const events = channel.events()[Symbol.asyncIterator]();
  return {
    channel,
    input,
    type: (line: string) => input.write(`${line}\n`),
    next: async (): Promise<InboundEvent> => {
      const result = await events.next();
      if (result.done) throw new Error('the event stream ended');
      return result.value;
    },
    ended: async () => (await events.next()).done,
    printed: () => printed,
  };
}

function prompt(overrides: Partial<ApprovalPrompt> = {}): ApprovalPrompt {
  return {
    id: 'ap1',
    title: 'Approval needed',
    tool: 'http_fetch',
    summary: 'Fetch https://example.com',
    args: '{"url":"https://example.com"}',
    actions: ['approve', 'always', 'deny'],
    requestedBy: { id: 'owner', name: 'ada' },
    expiresAt: Date.now() + 600_000,
    ...overrides,
  };
}

describe('TerminalChannel input', () => {
  it('turns a typed line into a DM message from the owner, addressed to the bot', async () => {
    const t = await terminal();
    t.type('hello there');
    expect(await t.next()).toMatchObject({
      type: 'message',
      text: 'hello there',
      mentionsBot: true,
      chat: { channel: 'terminal', chatId: 'local', kind: 'dm', scope: 'global' },
      sender: { id: 'owner', name: 'ada' },
    });
  });

  it('turns a slash line into a command without a respond hook', async () => {
    const t = await terminal();
    t.type('/status');
    t.type('/Policy allow http_fetch');
    const status = await t.next();
    expect(status).toMatchObject({ type: 'command', name: 'status', args: '' });
    expect(status.type === 'command' && status.respond).toBeUndefined();
    expect(await t.next()).toMatchObject({ type: 'command', name: 'policy', args: 'allow http_fetch' });
  });

  it('treats a bare "yes" as a message when no approval is pending', async () => {
    const t = await terminal();
    t.type('yes');
    expect(await t.next()).toMatchObject({ type: 'message', text: 'yes' });
  });

  it('skips empty lines', async () => {
    const t = await terminal();
    t.type('   ');
    t.type('after');
    expect(await t.next()).toMatchObject({ type: 'message', text: 'after' });
  });

  it('ends the event stream when the input ends', async () => {
    const t = await terminal();
    t.input.end();
    expect(await t.ended()).toBe(true);
  });

  it('ends the event stream on stop', async () => {
    const t = await terminal();
    await t.channel.stop();
    expect(await t.ended()).toBe(true);
  });

  it('tells the program the person quit when the input ends, and not when the channel is stopped', async () => {
    const quits: string[] = [];
    const quitting = await terminal({ onQuit: () => quits.push('input ended') });
    quitting.input.end();
    expect(await quitting.ended()).toBe(true);
    const stopped = await terminal({ onQuit: () => quits.push('stopped') });
    await stopped.channel.stop();
    expect(await stopped.ended()).toBe(true);
    expect(quits).toEqual(['input ended']);
  });
});

describe('TerminalChannel approvals', () => {
  it.each([
    ['y', 'approve'],
    ['yes', 'approve'],
    ['a', 'always'],
    ['always', 'always'],
    ['n', 'deny'],
    ['NO', 'deny'],
  ])('answers the pending prompt with %s -> %s', async (answer, action) => {
    const t = await terminal();
    await t.channel.sendApproval(TERMINAL_CHAT, prompt());
    t.type(answer);
    expect(await t.next()).toMatchObject({ type: 'approval', approvalId: 'ap1', action });
  });

  it('prints the prompt with the tool, each argument on its line and the question, without "only X can answer"', async () => {
    const t = await terminal();
    await t.channel.sendApproval(TERMINAL_CHAT, prompt());
    expect(t.printed()).toContain('Approval needed: http_fetch\n');
    expect(t.printed()).toContain('\n  url: "https://example.com"\n');
    expect(t.printed()).toMatch(/Expires in \d+ min\./);
    expect(t.printed()).not.toMatch(/can answer/);
    expect(t.printed()).toContain('Approve? [y]es / [n]o / [a]lways:');
  });

  it('styles the prompt with working escape codes and strips those of the texts it shows', async () => {
    const t = await terminal({ color: true });
    await t.channel.sendApproval(TERMINAL_CHAT, prompt({ summary: 'Fetch \x1b[2Jhttps://example.com', reason: 'see \x1b]0;owned\x07' }));
    expect(t.printed()).toContain('\x1b[1mApproval needed: http_fetch\x1b[22m\n');
    expect(t.printed()).toContain('\x1b[2mExpires in');
    expect(t.printed()).toContain('\nFetch [2Jhttps://example.com\nReason: see ]0;owned\n');
    // Every escape code printed is one of the styles (bold, dim and their end), and nothing else is a control character.
    // eslint-disable-next-line no-control-regex -- the styles' codes are what is looked for
    const styles = /\x1b\[[0-9;]*m/g;
    expect(t.printed().match(styles)?.every((code) => ['\x1b[1m', '\x1b[2m', '\x1b[22m'].includes(code))).toBe(true);
    // eslint-disable-next-line no-control-regex -- control characters are what must be absent
    expect(t.printed().replace(styles, '')).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
  });

  it('does not offer or accept "always" when the prompt does not allow it', async () => {
    const t = await terminal();
    await t.channel.sendApproval(TERMINAL_CHAT, prompt({ actions: ['approve', 'deny'] }));
    expect(t.printed()).toContain('Approve? [y]es / [n]o');
    expect(t.printed()).not.toContain('[a]lways');
    t.type('a');
    t.type('n');
    expect(await t.next()).toMatchObject({ type: 'approval', action: 'deny' });
    expect(t.printed()).toContain('not offered');
  });

  it('asks another button set by its letters, and takes c / s / t as those choices', async () => {
    const t = await terminal();
    const { tool: _tool, args: _args, ...base } = prompt();
    await t.channel.sendApproval(TERMINAL_CHAT, { ...base, title: 'Am I going in circles?', summary: 'The same search ran 3 times.', actions: ['continue', 'stop', 'redirect'] });
    expect(t.printed()).toContain('Am I going in circles?');
    expect(t.printed()).toContain('Your choice? [c]ontinue / [s]top / [t]ry another way:');
    // `y` answers no question here: it is asked again.
    t.type('y');
    t.type('t');
    expect(await t.next()).toMatchObject({ type: 'approval', approvalId: 'ap1', action: 'redirect' });
    expect(t.printed()).toContain('"y" is not an answer: type c, s or t');
  });

  it('asks again after a typo at the prompt, and takes a sentence as a message', async () => {
    const t = await terminal();
    await t.channel.sendApproval(TERMINAL_CHAT, prompt());
    t.type('yy');
    t.type('nope');
    t.type('no thanks, do something else');
    expect(await t.next()).toMatchObject({ type: 'message', text: 'no thanks, do something else' });
    expect(t.printed()).toContain('"yy" is not an answer: type y, n or a (or a sentence to tell me something else).');
    expect(t.printed()).toContain('"nope" is not an answer');
  });

  it('takes one answer per prompt: the next "y" is a message', async () => {
    const t = await terminal();
    await t.channel.sendApproval(TERMINAL_CHAT, prompt());
    t.type('y');
    t.type('y');
    expect(await t.next()).toMatchObject({ type: 'approval', action: 'approve' });
    expect(await t.next()).toMatchObject({ type: 'message', text: 'y' });
  });

  it('sends other text typed at the prompt as a message (the agent counts it as deny)', async () => {
    const t = await terminal();
    await t.channel.sendApproval(TERMINAL_CHAT, prompt());
    t.type('wait, use the other site');
    expect(await t.next()).toMatchObject({ type: 'message', text: 'wait, use the other site' });
  });

  it('prints the notice passed to respond and the outcome on resolve', async () => {
    const t = await terminal();
    const message = await t.channel.sendApproval(TERMINAL_CHAT, prompt());
    t.type('y');
    const answer = await t.next();
    if (answer.type !== 'approval') throw new Error('expected an approval answer');
    await answer.respond({ text: 'Approved, running it', private: true });
    await t.channel.resolveApproval(message, prompt(), { decision: 'approved', by: 'ada' });
    expect(t.printed()).toContain('Approved, running it');
    expect(t.printed()).toContain('✅ Approved by ada');
  });

  it('stops taking answers once the prompt is resolved', async () => {
    const t = await terminal();
    const message = await t.channel.sendApproval(TERMINAL_CHAT, prompt());
    await t.channel.resolveApproval(message, prompt(), { decision: 'expired' });
    t.type('y');
    expect(await t.next()).toMatchObject({ type: 'message', text: 'y' });
    expect(t.printed()).toContain('Expired');
  });
});

describe('TerminalChannel output', () => {
  it('prints a sent message after the bot name', async () => {
    const t = await terminal();
    await t.channel.send(TERMINAL_CHAT, '# Title\n**bold** text');
    expect(t.printed()).toContain('pincer: # Title\n**bold** text');
  });

  it('prints only the new tail when an edit extends the message', async () => {
    const t = await terminal();
    const sent = await t.channel.send(TERMINAL_CHAT, 'Hello');
    await t.channel.edit(sent, 'Hello world');
    await t.channel.edit(sent, 'Hello world');
    await t.channel.edit(sent, 'Hello world, again');
    expect(t.printed()).toBe('pincer: Hello world, again');
  });

  it('prints a streamed answer once: each edit adds the new text, the in-progress mark is not printed', async () => {
    const t = await terminal();
    const sent = await t.channel.send(TERMINAL_CHAT, `The answer${IN_PROGRESS_MARK}`);
    await t.channel.edit(sent, `The answer is forty${IN_PROGRESS_MARK}`);
    await t.channel.edit(sent, 'The answer is forty-two.');
    expect(t.printed()).toBe('pincer: The answer is forty-two.');
  });

  it('continues an extended message on a new line once something else was printed', async () => {
    const t = await terminal();
    const first = await t.channel.send(TERMINAL_CHAT, 'Hello');
    await t.channel.send(TERMINAL_CHAT, 'Other');
    await t.channel.edit(first, 'Hello world');
    expect(t.printed()).toBe('pincer: Hello\npincer: Other\npincer: … world');
  });

  it('prints the whole text again when an edit changes it', async () => {
    const t = await terminal();
    const sent = await t.channel.send(TERMINAL_CHAT, 'Draft answer');
    await t.channel.edit(sent, 'Final answer');
    expect(t.printed()).toBe('pincer: Draft answer\npincer: Final answer');
  });

  it('ends the line of a message once it has settled', async () => {
    const t = await terminal();
    await t.channel.send(TERMINAL_CHAT, 'Done');
    // The line is ended by the terminal's own settle timer: wait for it, then check it came once.
    for (const end = Date.now() + 5_000; !t.printed().endsWith('\n') && Date.now() < end; ) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(t.printed()).toBe('pincer: Done\n');
  });

  it('removes escape sequences from what it prints', async () => {
    const t = await terminal();
    await t.channel.send(TERMINAL_CHAT, 'title \x1b]0;owned\x07\x1b[2Jend');
    expect(t.printed()).toContain('title ]0;owned[2Jend');
    expect(t.printed()).not.toContain('\x1b');
    expect(t.printed()).not.toContain('\x07');
  });

  it('shows no typing status when the output is not a terminal', async () => {
    const t = await terminal();
    await t.channel.typing(TERMINAL_CHAT);
    expect(t.printed()).toBe('');
  });

  it('refuses to send to a chat other than its own', async () => {
    const t = await terminal();
    await expect(t.channel.send({ channel: 'terminal', chatId: 'elsewhere' }, 'hi')).rejects.toBeInstanceOf(ChannelError);
  });

  it('treats the person at the keyboard as an admin, and nobody else', async () => {
    const t = await terminal();
    expect(await t.channel.isAdmin(TERMINAL_CHAT, 'owner')).toBe(true);
    expect(await t.channel.isAdmin(TERMINAL_CHAT, 'someone')).toBe(false);
  });
});
