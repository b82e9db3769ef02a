/**
 * The scenario driver over the fake Telegram Bot API: the real grammY client
 * in TelegramChannel long-polls `test/fakes/telegram`. DMs are private chats
 * whose id is the user's id; groups are supergroups; commands are typed
 * `/name` messages with a bot_command entity (`/name@bot` in groups); prompts
 * are messages with an approval inline keyboard; private notices are the
 * toasts answering a user's button presses.
 */
import type { Chat, InlineKeyboardButton, InlineKeyboardMarkup, User } from 'grammy/types';
import { decodeApprovalPayload } from '../../../src/channels/approval-payload.js';
import { TelegramChannel } from '../../../src/channels/telegram/adapter.js';
import type { PromptAction, ChannelDeps } from '../../../src/channels/types.js';
import { TelegramConfigSchema } from '../../../src/config/schema.js';
import { startFakeTelegram, type BotMessageState, type FakeTelegram } from '../../fakes/telegram/index.js';
import { allowlistIds, type BotMessage, type ChannelSetup, type ScenarioChat, type ScenarioDriver, type ScenarioUser, type SeenApproval } from '../driver.js';

/** The driver, with the fake underneath for scenarios that need more. */
export interface TelegramDriver extends ScenarioDriver {
  /** The running fake (after `setup`). */
  readonly fake: FakeTelegram;
}

/**
 * `users[0]` is the creator of every group (and the owner in the scenario
 * config); `users[1]` and `users[2]` are members. Each `group()` is a new
 * supergroup.
 */
export function createTelegramDriver(): TelegramDriver {
  const users: readonly ScenarioUser[] = [
    { id: '2000001', name: 'Ada' },
    { id: '2000002', name: 'Ben' },
    { id: '2000003', name: 'Cleo' },
  ];
  let running: FakeTelegram | undefined;
  let latest: TelegramChannel | undefined;
  let groups = 0;

  const fake = (): FakeTelegram => {
    if (!running) throw new Error('telegram driver: call setup() first');
    return running;
  };
  const botMessages = (chat: ScenarioChat): BotMessageState[] =>
    fake()
      .chatMessages(chat.id)
      .filter((message) => (chat.subId ? message.threadId === Number(chat.subId) : message.threadId === undefined));

  return {
    name: 'telegram',
    users,
    get fake() {
      return fake();
    },
    setup: async () => {
      // Privacy mode off (/setprivacy Disable), as a bot that keeps group context needs.
      running = await startFakeTelegram({ privacy: false });
    },
    teardown: async () => {
      await latest?.stop();
      await running?.close();
      running = undefined;
    },
    createChannel: (deps: ChannelDeps, setup?: ChannelSetup) => {
      const { users, conversations } = allowlistIds(setup?.access);
      const config = TelegramConfigSchema.parse({ token: fake().token, apiRoot: fake().apiRoot, allowedUsers: users, allowedChats: conversations });
      latest = new TelegramChannel(config, deps, {
        owners: setup?.owners ?? [],
        pollingTimeoutSeconds: 5,
        pollingRetryDelayMs: 100,
        networkRetryDelayMs: 50,
        throttle: false,
      });
      return latest;
    },
    dm: (user) => ({ kind: 'dm', id: user.id }),
    group: () => {
      groups++;
      const id = `-100${String(groups).padStart(10, '0')}`;
      fake().setMemberStatus(id, users[0]!.id, 'creator');
      return { kind: 'group', id, title: `Group ${groups}` };
    },
    sendMessage: async (chat, user, text, options = {}) => {
      const mention = chat.kind === 'group' && options.mention ? `@${fake().bot.username} ` : '';
      const replyTo = options.replyToBot ? botMessages(chat).at(-1)?.messageId : undefined;
      fake().sendUserMessage({
        chat: telegramChat(chat),
        from: telegramUser(user),
        text: mention + text,
        ...(replyTo !== undefined ? { replyTo } : {}),
        ...(chat.subId ? { threadId: Number(chat.subId) } : {}),
      });
    },
    sendFile: async (chat, user, text, file) => {
      fake().sendUserMessage({
        chat: telegramChat(chat),
        from: telegramUser(user),
        text: chat.kind === 'group' ? `@${fake().bot.username} ${text}` : text,
        ...(file.photo ? { photo: { ...file, ...file.photo } } : { document: file }),
        ...(chat.subId ? { threadId: Number(chat.subId) } : {}),
      });
    },
    sendVoice: async (chat, user, text, file) => {
      fake().sendUserMessage({
        chat: telegramChat(chat),
        from: telegramUser(user),
        text,
        voice: { name: file.name, mimeType: file.mimeType, bytes: file.bytes, duration: file.durationSecs },
        ...(chat.subId ? { threadId: Number(chat.subId) } : {}),
      });
    },
    sendCommand: async (chat, user, name, args = '') => {
      const command = chat.kind === 'group' ? `/${name}@${fake().bot.username}` : `/${name}`;
      fake().sendUserMessage({
        chat: telegramChat(chat),
        from: telegramUser(user),
        text: args ? `${command} ${args}` : command,
        ...(chat.subId ? { threadId: Number(chat.subId) } : {}),
      });
    },
    pressApproval: async (chat, user, approval: SeenApproval, action: PromptAction) => {
      const message = botMessages(chat).find((m) => String(m.messageId) === approval.messageId);
      // A prompt whose buttons are gone is pressed as a client that has not refreshed would.
      const button = callbackButtons(message?.replyMarkup ?? message?.initialReplyMarkup).find(
        (candidate) => decodeApprovalPayload(candidate.callback_data)?.action === action,
      );
      if (!message || !button) throw new Error(`telegram driver: no ${action} button on message ${approval.messageId}`);
      fake().pressButton({ chat: telegramChat(chat), from: telegramUser(user), messageId: message.messageId, data: button.callback_data });
    },
    messages: (chat): BotMessage[] =>
      botMessages(chat)
        .filter((message) => !isApprovalPrompt(message))
        .map((message) => ({ messageId: String(message.messageId), text: message.plainText })),
    approvals: (chat): SeenApproval[] =>
      botMessages(chat)
        .filter(isApprovalPrompt)
        .map((message) => ({
          messageId: String(message.messageId),
          text: message.plainText,
          actions: approvalActions(message.replyMarkup),
        })),
    sentFiles: (chat) =>
      fake()
        .uploads.filter((upload) => upload.chatId === chat.id && upload.threadId === (chat.subId ? Number(chat.subId) : undefined))
        .map(({ name, size, sha256, caption, method }) => ({ name, size, sha256, ...(caption ? { caption } : {}), shownAs: method === 'sendPhoto' ? 'photo' : 'document' })),
    failNextUpload: (failure, kind) =>
      fake().failNext(
        kind === 'photo' ? 'sendPhoto' : 'sendDocument',
        failure === 'too-large' ? { error_code: 413, description: 'Request Entity Too Large' } : { error_code: 429, description: 'Too Many Requests: retry after 1', retry_after: 1 },
      ),
    privateNotices: (user) =>
      fake()
        .callbackAnswers.filter((answer) => answer.userId === user.id && answer.text)
        .map((answer) => answer.text!),
  };
}

function telegramUser(user: ScenarioUser): User {
  return { id: Number(user.id), is_bot: false, first_name: user.name };
}

function telegramChat(chat: ScenarioChat): Chat {
  if (chat.kind === 'dm') return { id: Number(chat.id), type: 'private', first_name: 'User' } as Chat;
  return { id: Number(chat.id), type: 'supergroup', title: chat.title ?? 'Group', ...(chat.subId ? { is_forum: true } : {}) } as Chat;
}

function callbackButtons(markup: InlineKeyboardMarkup | undefined): InlineKeyboardButton.CallbackButton[] {
  return (markup?.inline_keyboard.flat() ?? []).filter(
    (button): button is InlineKeyboardButton.CallbackButton => 'callback_data' in button,
  );
}

/** A message sent with approval buttons (it stays a prompt after they are removed). */
function isApprovalPrompt(message: BotMessageState): boolean {
  return callbackButtons(message.initialReplyMarkup).some((button) => decodeApprovalPayload(button.callback_data));
}

function approvalActions(markup: InlineKeyboardMarkup | undefined): PromptAction[] {
  return callbackButtons(markup).flatMap((button) => {
    const decoded = decodeApprovalPayload(button.callback_data);
    return decoded ? [decoded.action] : [];
  });
}
