import { describe, expect, it } from 'vitest';
import type { ApprovalPrompt, ChannelDeps, InboundEvent } from '../../src/channels/types.js';
import { ChannelError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { createTestChannelDriver } from '../scenarios/drivers/test-channel.js';
import { TestChannel, TestPlatform, WaitTimeoutError, testDm, testGroup } from './test-channel.js';

const ada = { id: 'u1', name: 'Ada' };
const ben = { id: 'u2', name: 'Ben' };

function deps(): ChannelDeps {
  return {
    log: silentLogger,
    commands: [{ name: 'stop', description: 'Stop the running turn' }],
    completions: () => [],
    state: { get: async () => undefined, set: async () => undefined },
  };
}

function prompt(overrides: Partial<ApprovalPrompt> = {}): ApprovalPrompt {
  return {
    id: 'ap1',
    title: 'Approval needed',
    tool: 'http_fetch',
    summary: 'Fetch a page',
    args: '{"url":"https://example.com"}',
    actions: ['approve', 'always', 'deny'],
    requestedBy: ada,
    expiresAt: Date.now() + 600_000,
    ...overrides,
  };
}

async function nextEvent(channel: TestChannel): Promise<InboundEvent> {
  const result = await channel.events()[Symbol.asyncIterator]().next();
  if (result.done) throw new Error('the event stream ended');
  return result.value;
}

describe('TestChannel', () => {
  it('yields injected messages, addressed to the bot by default only in DMs', async () => {
    const channel = new TestChannel();
    channel.userMessage({ chat: testDm(ada.id), sender: ada, text: 'hi' });
    channel.userMessage({ chat: testGroup('g1'), sender: ben, text: 'chatter' });
    expect(await nextEvent(channel)).toMatchObject({ type: 'message', text: 'hi', mentionsBot: true });
    expect(await nextEvent(channel)).toMatchObject({ type: 'message', text: 'chatter', mentionsBot: false });
  });

  it('splits long messages at the limit and applies edits with history', async () => {
    const channel = new TestChannel({ capabilities: { maxMessageLength: 40 } });
    const chat = testDm(ada.id);
    const long = 'word '.repeat(15).trim();
    const sent = await channel.send(chat, long);
    expect(sent.ids.length).toBeGreaterThan(1);
    expect(channel.platform.messagesIn(chat).every((m) => m.text.length <= 40)).toBe(true);

    const edited = await channel.edit(sent, 'short now');
    expect(edited.ids).toEqual([sent.ids[0]]);
    expect(channel.platform.messagesIn(chat).map((m) => m.text)).toEqual(['short now']);
    expect(channel.platform.sent[0]!.history).toHaveLength(2);
  });

  it('records prompts, emits presses in the prompt chat, and resolves them', async () => {
    const channel = new TestChannel();
    const chat = testDm(ada.id);
    channel.userMessage({ chat, sender: ada, text: 'fetch it' });
    const message = await channel.sendApproval(chat, prompt({ actions: ['approve', 'deny'] }));
    expect(channel.platform.approvalsIn(chat)[0]).toMatchObject({ state: 'shown', actions: ['approve', 'deny'] });

    const press = channel.press('ap1', 'approve', ada);
    expect(press.chat).toMatchObject({ chatId: `dm-${ada.id}`, kind: 'dm' });
    await press.respond({ text: 'Approved' });
    expect(channel.platform.noticesFor(ada.id).map((n) => n.text)).toEqual(['Approved']);

    await channel.resolveApproval(message, prompt(), { decision: 'approved', by: 'Ada' });
    expect(channel.platform.approvalsIn(chat)[0]).toMatchObject({ state: 'resolved', actions: [] });
    expect(channel.platform.approvalsIn(chat)[0]!.text).toContain('Approved by Ada');
  });

  it('fails the requested number of sends with a retryable ChannelError, then succeeds', async () => {
    const channel = new TestChannel();
    channel.platform.failNext('send', 2);
    const chat = testDm(ada.id);
    for (let i = 0; i < 2; i++) {
      const error = await channel.send(chat, 'x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ChannelError);
      expect((error as ChannelError).retryable).toBe(true);
    }
    await channel.send(chat, 'through');
    expect(channel.platform.messagesIn(chat).map((m) => m.text)).toEqual(['through']);
  });

  it('delays outbound calls by the configured latency', async () => {
    const channel = new TestChannel({ latencyMs: 60 });
    const started = Date.now();
    await channel.send(testDm(ada.id), 'slow');
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
  });

  it('answers isAdmin from the admin set', async () => {
    const channel = new TestChannel({ admins: [ada.id] }, deps());
    expect(await channel.isAdmin(testGroup('g1'), ada.id)).toBe(true);
    expect(await channel.isAdmin(testGroup('g1'), ben.id)).toBe(false);
  });

  it('waits for a change, and explains a timeout with what it saw', async () => {
    const channel = new TestChannel();
    const chat = testDm(ada.id);
    const waiting = channel.waitFor(() => channel.platform.lastMessage(chat), 1000, 'a reply');
    setTimeout(() => void channel.send(chat, 'late reply'), 20);
    expect((await waiting).text).toBe('late reply');

    const timeout = channel.waitFor(() => channel.platform.lastMessage(testDm(ben.id)), 50, 'a reply to Ben');
    await expect(timeout).rejects.toBeInstanceOf(WaitTimeoutError);
    await expect(timeout).rejects.toThrow(/late reply/);
  });

  it('keeps the platform state across a restart and routes events to the new adapter', async () => {
    const platform = new TestPlatform();
    const first = platform.createChannel(deps());
    await first.start();
    const chat = testDm(ada.id);
    await first.send(chat, 'before restart');
    await first.stop();
    expect(() => first.userMessage({ chat, sender: ada, text: 'lost?' })).toThrow(ChannelError);

    const second = platform.createChannel(deps());
    expect(platform.channel).toBe(second);
    platform.channel.userMessage({ chat, sender: ada, text: 'after restart' });
    expect(await nextEvent(second)).toMatchObject({ text: 'after restart' });
    expect(platform.messagesIn(chat).map((m) => m.text)).toEqual(['before restart']);
    expect(platform.registeredCommands.map((c) => c.name)).toEqual(['stop']);
  });
});

describe('test channel scenario driver', () => {
  it('shows bot messages without prompts, and prompts with their current actions', async () => {
    const driver = createTestChannelDriver();
    const channel = driver.createChannel(deps());
    const [owner] = driver.users;
    const dm = driver.dm(owner!);
    const address = { channel: 'test', chatId: dm.id };
    await channel.send(address, '**Hello**');
    const message = await channel.sendApproval(address, prompt({ requestedBy: owner! }));
    expect(driver.messages(dm)).toEqual([{ messageId: expect.any(String), text: 'Hello' }]);
    expect(driver.approvals(dm)[0]!.actions).toEqual(['approve', 'always', 'deny']);

    await driver.pressApproval(dm, owner!, driver.approvals(dm)[0]!, 'always');
    const press = await nextEvent(channel);
    expect(press).toMatchObject({ type: 'approval', approvalId: 'ap1', action: 'always', sender: { id: owner!.id } });
    await channel.resolveApproval(message, prompt(), { decision: 'always' });
    expect(driver.approvals(dm)[0]!.actions).toEqual([]);
  });

  it('gives each group its own scope and routes command replies by privacy', async () => {
    const driver = createTestChannelDriver();
    const channel = driver.createChannel(deps());
    const [owner, member] = driver.users;
    const group = driver.group();
    expect(driver.group().id).not.toBe(group.id);

    await driver.sendCommand(group, member!, 'policy', 'list');
    const command = await nextEvent(channel);
    expect(command).toMatchObject({ type: 'command', name: 'policy', args: 'list', chat: { kind: 'group', scope: `test:group:${group.id}` } });
    if (command.type !== 'command' || !command.respond) throw new Error('expected an interaction command');
    await command.respond({ text: 'Only admins can change policy.', private: true });
    await command.respond({ text: 'Policy: default' });
    expect(driver.privateNotices(member!)).toEqual(['Only admins can change policy.']);
    expect(driver.privateNotices(owner!)).toEqual([]);
    expect(driver.messages(group).map((m) => m.text)).toEqual(['Policy: default']);
    expect(await channel.isAdmin!(command.chat, owner!.id)).toBe(true);
    expect(await channel.isAdmin!(command.chat, member!.id)).toBe(false);
  });
});
