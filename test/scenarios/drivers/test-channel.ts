/**
 * The scenario driver over the in-memory test platform: the reference the
 * other channels' drivers are compared with, and the fastest way to run the
 * shared scenarios.
 */
import type { PromptAction, ChannelDeps, ChatAddress, ChatInfo } from '../../../src/channels/types.js';
import { ChannelError } from '../../../src/errors.js';
import { TestPlatform, testDm, testGroup, type TestChannel } from '../../support/test-channel.js';
import { allowlistIds, type BotMessage, type ChannelSetup, type ScenarioChat, type ScenarioDriver, type ScenarioUser, type SeenApproval } from '../driver.js';

const CHANNEL = 'test';

/** The driver, with the platform underneath for scenarios that need more (faults, latency). */
export interface TestChannelDriver extends ScenarioDriver {
  readonly platform: TestPlatform;
  /** A new adapter over the same platform (a restarted bot's adapter). */
  createChannel(deps: ChannelDeps, setup?: ChannelSetup): TestChannel;
}

/**
 * A driver whose `users[0]` (the owner) is an admin of every group and
 * `users[1]`, `users[2]` ordinary members. DMs are `dm-<userId>`; each
 * `group()` is a new chat with scope `test:group:<id>`.
 */
export function createTestChannelDriver(): TestChannelDriver {
  const users: readonly ScenarioUser[] = [
    { id: 'u1', name: 'Ada' },
    { id: 'u2', name: 'Ben' },
    { id: 'u3', name: 'Cleo' },
  ];
  const platform = new TestPlatform({ name: CHANNEL, admins: [users[0]!.id] });
  let groups = 0;

  return {
    name: CHANNEL,
    users,
    platform,
    setup: async () => undefined,
    teardown: async () => {
      await platform.latestChannel?.stop();
    },
    createChannel: (deps: ChannelDeps, setup?: ChannelSetup) => {
      const { users, conversations } = allowlistIds(setup?.access);
      return platform.createChannel(deps, { allowedUsers: users, allowedChats: conversations, owners: setup?.owners ?? [] });
    },
    dm: (user) => ({ kind: 'dm', id: testDm(user.id, CHANNEL).chatId }),
    group: () => {
      groups++;
      return { kind: 'group', id: `group-${groups}`, title: `Group ${groups}` };
    },
    sendMessage: async (chat, user, text, options = {}) => {
      const info = chatInfo(chat);
      platform.channel.userMessage({
        chat: info,
        sender: { ...user },
        text,
        mentionsBot: info.kind === 'dm' || Boolean(options.mention || options.replyToBot),
        replyToBot: Boolean(options.replyToBot),
      });
    },
    sendCommand: async (chat, user, name, args = '') => {
      platform.channel.command({ chat: chatInfo(chat), sender: { ...user }, name, args, interaction: true });
    },
    pressApproval: async (_chat, user, approval: SeenApproval, action: PromptAction) => {
      const record = platform.approvals.find((a) => a.messageId === approval.messageId);
      if (!record) throw new ChannelError(CHANNEL, `no approval prompt in message ${approval.messageId}`);
      platform.channel.press(record.prompt.id, action, { ...user });
    },
    messages: (chat): BotMessage[] =>
      platform.messagesIn(address(chat)).map((record) => ({ messageId: record.id, text: readable(record.text) })),
    approvals: (chat): SeenApproval[] =>
      platform.approvalsIn(address(chat)).map((record) => ({
        messageId: record.messageId,
        text: readable(record.text),
        actions: [...record.actions],
      })),
    privateNotices: (user) => platform.noticesFor(user.id).map((notice) => notice.text),
  };
}

function address(chat: ScenarioChat): ChatAddress {
  return chat.subId ? { channel: CHANNEL, chatId: chat.id, subId: chat.subId } : { channel: CHANNEL, chatId: chat.id };
}

function chatInfo(chat: ScenarioChat): ChatInfo {
  const base: ChatInfo =
    chat.kind === 'dm'
      ? { channel: CHANNEL, chatId: chat.id, kind: 'dm', scope: 'global' }
      : testGroup(chat.id, chat.title, CHANNEL);
  return chat.subId ? { ...base, subId: chat.subId } : base;
}

/**
 * The text as a person reads it once the platform has rendered the markdown:
 * emphasis and code markers gone, fence lines dropped.
 */
function readable(markdown: string): string {
  return markdown
    .split('\n')
    .filter((line) => !/^\s*(```|~~~)/.test(line))
    .join('\n')
    .replace(/\*\*|`/g, '');
}
