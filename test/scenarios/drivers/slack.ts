/**
 * The scenario driver over the fake Slack: the real Bolt app in SlackChannel
 * talks Web API and Socket Mode to `test/fakes/slack`. Groups are public
 * channels, where the bot answers in the thread of the message that addressed
 * it; commands are `/pincer <name> <args>` slash commands; prompts are
 * messages with approval buttons; private notices are ephemeral messages and
 * ephemeral slash-command responses.
 */
import { decodeApprovalPayload } from '../../../src/channels/approval-payload.js';
import { SlackChannel } from '../../../src/channels/slack/adapter.js';
import type { PromptAction, ChannelDeps } from '../../../src/channels/types.js';
import { SlackConfigSchema } from '../../../src/config/schema.js';
import { messageText, readableText, startFakeSlack, type FakeMessage, type FakeSlack } from '../../fakes/slack/index.js';
import { allowlistIds, type BotMessage, type ChannelSetup, type ScenarioChat, type ScenarioDriver, type ScenarioUser, type SeenApproval } from '../driver.js';

/** The driver, with the fake underneath for scenarios that need more. */
export interface SlackDriver extends ScenarioDriver {
  /** The running fake (after `setup`). */
  readonly fake: FakeSlack;
}

/** Fast retries: nothing in the scenarios fails on purpose, and nothing may hang. */
const RETRIES = { retries: 2, factor: 1, minTimeout: 10, maxTimeout: 50 };

/**
 * `users[0]` is a workspace admin (and the owner in the scenario config);
 * `users[1]` and `users[2]` are regular members. Ids are fixed so that they
 * are known before `setup`; each user's DM is `D<userId>`.
 */
export function createSlackDriver(): SlackDriver {
  const users: readonly ScenarioUser[] = [
    { id: 'U0ADA', name: 'Ada' },
    { id: 'U0BEN', name: 'Ben' },
    { id: 'U0CLEO', name: 'Cleo' },
  ];
  let running: FakeSlack | undefined;
  let latest: SlackChannel | undefined;
  let groups = 0;

  const fake = (): FakeSlack => {
    if (!running) throw new Error('slack driver: call setup() first');
    return running;
  };

  return {
    name: 'slack',
    users,
    get fake() {
      return fake();
    },
    async setup() {
      running = await startFakeSlack();
      for (const [index, user] of users.entries()) {
        running.addUser({ ...user, isAdmin: index === 0 });
        running.addConversation({ id: dmId(user), type: 'im', user: user.id });
      }
    },
    async teardown() {
      await latest?.stop();
      await running?.close();
      running = undefined;
    },
    createChannel(deps: ChannelDeps, setup?: ChannelSetup) {
      const { users, conversations } = allowlistIds(setup?.access);
      const config = SlackConfigSchema.parse({
        botToken: fake().botToken,
        appToken: fake().appToken,
        apiUrl: fake().apiUrl,
        allowedUsers: users,
        allowedChannels: conversations,
      });
      latest = new SlackChannel(config, deps, { clientRetries: RETRIES, owners: setup?.owners ?? [] });
      return latest;
    },
    dm: (user) => ({ kind: 'dm', id: dmId(user) }),
    group() {
      groups++;
      const name = `group-${groups}`;
      const id = `C0GROUP${groups}`;
      fake().addConversation({ id, type: 'channel', name });
      return { kind: 'group', id, title: `#${name}` };
    },
    async sendMessage(chat, user, text, options = {}) {
      const threadTs = options.replyToBot ? lastBotThread(fake(), chat.id) : chat.subId;
      await fake().sendMessage({
        channel: chat.id,
        user: user.id,
        text,
        ...(threadTs ? { threadTs } : {}),
        mention: chat.kind === 'group' && Boolean(options.mention),
      });
    },
    async sendFile(chat, user, text, file) {
      await fake().sendMessage({
        channel: chat.id,
        user: user.id,
        text,
        ...(chat.subId ? { threadTs: chat.subId } : {}),
        mention: chat.kind === 'group',
        files: [{ name: file.name, mimetype: file.mimeType, bytes: file.bytes }],
      });
    },
    async sendVoice(chat, user, text, file) {
      await fake().sendMessage({
        channel: chat.id,
        user: user.id,
        text,
        ...(chat.subId ? { threadTs: chat.subId } : {}),
        mention: chat.kind === 'group',
        files: [{ name: file.name, mimetype: file.mimeType, bytes: file.bytes }],
      });
    },
    async sendCommand(chat, user, name, args = '') {
      await fake().runSlashCommand({ channel: chat.id, user: user.id, text: `${name} ${args}`.trim() });
    },
    async pressApproval(chat: ScenarioChat, user, approval: SeenApproval, action: PromptAction) {
      const message = fake().workspace.message(chat.id, approval.messageId);
      const actionId = [...(message?.buttons.keys() ?? [])].find((id) => decodeApprovalPayload(id)?.action === action);
      if (!actionId) throw new Error(`slack driver: message ${approval.messageId} never had a ${action} button`);
      await fake().pressButton({ channel: chat.id, user: user.id, messageTs: approval.messageId, actionId });
    },
    messages: (chat): BotMessage[] =>
      fake()
        .botMessages(chat.id)
        .filter((message) => !message.hadApprovalButtons)
        .map((message) => ({ messageId: message.ts, text: readableText(messageText(message)) }))
        .filter((message) => message.text !== ''),
    approvals: (chat): SeenApproval[] =>
      fake()
        .botMessages(chat.id)
        .filter((message) => message.hadApprovalButtons)
        .map((message) => ({ messageId: message.ts, text: readableText(messageText(message)), actions: currentActions(message) })),
    sentFiles: (chat) =>
      fake()
        .uploads.completed.filter((upload) => upload.channel === chat.id && (!chat.subId || upload.threadTs === chat.subId))
        .map(({ name, size, sha256, caption, filetype }) => ({ name, size, sha256, ...(caption ? { caption } : {}), shownAs: ['png', 'jpg', 'gif', 'webp'].includes(filetype) ? 'photo' : 'document' })),
    // A 413 is left out: Slack takes up to 1 GB, above attachments.maxBytes, and its client retries HTTP errors of the upload URL.
    failNextUpload: (failure) => {
      if (failure === 'rate-limited') fake().failNext('files.getUploadURLExternal', { status: 429, retryAfter: 1 });
      else fake().uploads.failNextUpload(413);
    },
    privateNotices: (user) =>
      fake()
        .workspace.notices.filter((notice) => notice.user === user.id)
        .filter((notice) => notice.kind === 'ephemeral' || notice.response_type === 'ephemeral')
        .map((notice) => readableText(notice.text)),
  };
}

function dmId(user: ScenarioUser): string {
  return `D${user.id}`;
}

/** The thread of the bot's latest message in a conversation: where replying to it goes. */
function lastBotThread(fake: FakeSlack, channel: string): string | undefined {
  const last = fake.botMessages(channel).at(-1);
  return last ? (last.thread_ts ?? last.ts) : undefined;
}

/** The approval actions a message offers now (none once resolved). */
function currentActions(message: FakeMessage): PromptAction[] {
  return (message.blocks ?? [])
    .flatMap((block) => ((block as { type?: string }).type === 'actions' ? ((block as { elements?: { action_id?: string }[] }).elements ?? []) : []))
    .flatMap((element) => decodeApprovalPayload(element.action_id ?? '')?.action ?? []);
}
