/**
 * The Telegram channel: pincer's Channel contract over grammY. Updates arrive
 * by long polling (default; one elected instance polls, see polling-duty.ts)
 * or webhook, are deduplicated by update_id, and are only queued here; replies
 * leave as Telegram HTML through {@link TelegramOutbound}.
 */
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Bot } from 'grammy';
import type { Update } from 'grammy/types';
import { soleElection } from '../election.js';
import type { Config } from '../../config/schema.js';
import { ChannelError, ConfigError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { openDmWarning } from '../access.js';
import { approvalPromptText, approvalResolvedText } from '../approval-text.js';
import { EventQueue } from '../event-queue.js';
import { fetchTelegramFile } from './files.js';
import type {
  AttachmentMeta,
  FetchLimits,
  ApprovalOutcome,
  ApprovalPrompt,
  Channel,
  ChannelCapabilities,
  ChannelDeps,
  ChannelHealth,
  ChatAddress,
  ChatInfo,
  InboundEvent,
  OutboundFile,
  SendOptions,
  SentMessage,
} from '../types.js';
import { AccessPolicy } from './access.js';
import { AdminCache } from './admins.js';
import { approvalKeyboard, NO_KEYBOARD } from './approvals.js';
import { createBot } from './bot.js';
import { CallbackAnswers } from './callbacks.js';
import { TELEGRAM } from './chat.js';
import { registerCommands, toBotCommands } from './commands.js';
import { describeError, isUnauthorized, toChannelError } from './errors.js';
import type { BotIdentity } from './inbound.js';
import { resolveOptions, type ResolvedTelegramOptions, type TelegramChannelOptions } from './options.js';
import { POSTING_METHODS, TelegramOutbound } from './outbound.js';
import { SentTrail } from './sent-trail.js';
import { sendTelegramFile, TELEGRAM_FILE_LIMITS } from './uploads.js';
import { TELEGRAM_MESSAGE_LIMIT } from './message-limit.js';
import { PollingDuty } from './polling-duty.js';
import { ALLOWED_UPDATES } from './poller.js';
import { UpdateRouter } from './router.js';
import { networkReason } from './retry.js';
import { grammySignal } from './signal.js';
import { UpdateLedger } from './update-ledger.js';
import { WebhookServer } from './webhook.js';

/** Telegram tolerates about one edit per second per chat. */
const MIN_EDIT_INTERVAL_MS = 1000;
/** "typing…" shows for five seconds; refresh a little before it fades. */
const TYPING_INTERVAL_MS = 4000;
/** How long start-up waits for getMe before it reports the Bot API unreachable. */
const IDENTIFY_TIMEOUT_MS = 30_000;
/** When a slow getMe is first reported. */
const IDENTIFY_WARN_MS = 5_000;

/**
 * A Telegram bot as a pincer channel.
 * @example
 * const channel = new TelegramChannel(config.telegram, deps);
 * await channel.start();
 * for await (const event of channel.events()) { ... }
 */
export class TelegramChannel implements Channel {
  readonly name = TELEGRAM;
  readonly capabilities: ChannelCapabilities = {
    maxMessageLength: TELEGRAM_MESSAGE_LIMIT,
    minEditIntervalMs: MIN_EDIT_INTERVAL_MS,
    typingIntervalMs: TYPING_INTERVAL_MS,
    fileLimits: TELEGRAM_FILE_LIMITS,
  };

  private readonly options: ResolvedTelegramOptions;
  private readonly log: Logger;
  /** Why the last API call failed on the network, if one did (for start-up warnings). */
  private lastNetworkFailure: string | undefined;
  private readonly lifetime = new AbortController();
  private readonly queue = new EventQueue<InboundEvent>();
  private readonly bot: Bot;
  private readonly outbound: TelegramOutbound;
  private readonly callbacks: CallbackAnswers;
  private readonly admins: AdminCache;
  private readonly access: AccessPolicy;
  private polling: PollingDuty | undefined;
  private webhook: WebhookServer | undefined;
  private stopped = false;

  constructor(
    private readonly config: Config['telegram'],
    private readonly deps: ChannelDeps,
    options?: TelegramChannelOptions,
  ) {
    if (!config.token) throw new ConfigError(['telegram.token: missing (set TELEGRAM_BOT_TOKEN)']);
    if (config.mode === 'webhook' && !config.webhook.url) {
      throw new ConfigError(['telegram.webhook.url: required when telegram.mode is "webhook"']);
    }
    // Every API call in flight listens on the lifetime signal; many at once is normal, not a leak.
    setMaxListeners(0, this.lifetime.signal);
    this.options = resolveOptions(options);
    this.log = deps.log;
    // A state that cannot update atomically (tests' stand-ins) keeps no record of posts.
    const trail = deps.state.update ? new SentTrail(deps.state, this.log) : undefined;
    this.bot = createBot({
      token: config.token,
      apiRoot: config.apiRoot,
      options: this.options,
      lifetime: this.lifetime.signal,
      onNetworkFailure: (error) => (this.lastNetworkFailure = networkReason(error)),
      ...(deps.sharedBudget ? { sharedBudget: deps.sharedBudget } : {}),
      // With a record of posts, a post that failed on the network is looked for before it is sent again.
      ...(trail ? { retriedByCaller: POSTING_METHODS } : {}),
    });
    const api = this.bot.api;
    const retry = { attempts: this.options.networkRetryAttempts, delayMs: this.options.networkRetryDelayMs, lifetime: this.lifetime.signal };
    this.outbound = new TelegramOutbound({ api, log: this.log, trail, retry });
    this.admins = new AdminCache(api, this.options.adminCacheMs, this.log);
    this.access = new AccessPolicy(config, deps.state, this.options.deniedReplyIntervalMs, this.options.owners);
    this.callbacks = new CallbackAnswers({
      api,
      log: this.log,
      answerDelayMs: this.options.callbackAnswerDelayMs,
      sendPrivate: async (userId, text) => void (await this.send({ channel: TELEGRAM, chatId: userId }, text)),
    });
  }

  /**
   * Checks the token (getMe), registers the commands, then starts the webhook,
   * or campaigns to poll (in the background: a standby instance is started too).
   */
  async start(): Promise<void> {
    if (this.stopped) throw new ChannelError(TELEGRAM, 'a stopped channel cannot be started again; create a new one');
    const bot = await this.identify();
    const ledger = new UpdateLedger(this.deps.state, bot.id, this.log);
    await ledger.load();
    const router = new UpdateRouter({
      bot,
      knownCommands: new Set(toBotCommands(this.deps.commands).map((command) => command.command)),
      access: this.access,
      callbacks: this.callbacks,
      queue: this.queue,
      acknowledged: this.deps.acknowledges === true,
      log: this.log,
      sendDenied: async (chatId, text) => void (await this.send({ channel: TELEGRAM, chatId }, text)),
    });
    this.bot.use((ctx) => this.receive(ctx.update, ledger, router));
    await this.registerCommands();
    if (this.config.mode === 'webhook') await this.startWebhook();
    else this.startPolling(ledger);
    const openDms = openDmWarning(this.access.lists);
    if (openDms) this.log.warn(`telegram: ${openDms}`);
    this.log.info({ bot: bot.username, mode: this.config.mode }, 'telegram: started');
  }

  /** Stops polling (aborting the long poll, then resigning) or the webhook server, and ends the event stream. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.polling?.stop();
    await this.webhook?.close();
    this.callbacks.stop();
    this.lifetime.abort();
    this.queue.close();
  }

  /** The inbound events; one stream per channel. */
  events(): AsyncIterable<InboundEvent> {
    return this.queue;
  }

  /** Sends markdown as Telegram HTML, split into parts of at most 4096 characters. */
  send(chat: ChatAddress, text: string, options?: SendOptions): Promise<SentMessage> {
    return this.outbound.send(chat, text, {
      replyTo: options?.replyTo,
      after: options?.after,
      parts: options?.parts,
      key: options?.idempotencyKey,
      resumed: options?.resumed,
    });
  }

  /** Edits the parts in place, sends extra parts and removes surplus ones. */
  edit(message: SentMessage, text: string): Promise<SentMessage> {
    return this.outbound.edit(message, text);
  }

  /** Shows "typing…" (in the forum topic, for topics). */
  typing(chat: ChatAddress): Promise<void> {
    return this.outbound.typing(chat);
  }

  /** Shows the prompt with Approve / Always allow / Deny buttons. */
  sendApproval(chat: ChatAddress, prompt: ApprovalPrompt): Promise<SentMessage> {
    return this.outbound.send(chat, approvalPromptText(prompt), { replyMarkup: approvalKeyboard(prompt) });
  }

  /** Rewrites the prompt with its outcome and removes the buttons. */
  async resolveApproval(message: SentMessage, prompt: ApprovalPrompt, outcome: ApprovalOutcome): Promise<void> {
    await this.outbound.edit(message, approvalResolvedText(prompt, outcome), { replyMarkup: NO_KEYBOARD });
  }

  /** Sends a file: an image as a photo, anything else as a document (see uploads.ts). */
  sendFile(chat: ChatAddress, file: OutboundFile, options?: Pick<SendOptions, 'replyTo'>): Promise<SentMessage> {
    return sendTelegramFile(this.bot.api, this.log, chat, file, options?.replyTo);
  }

  /** Group creator or administrator (cached for a minute); false in DMs. */
  isAdmin(chat: ChatInfo, userId: string): Promise<boolean> {
    return this.admins.isAdmin(chat, userId);
  }

  /** The allowlists, and in a group whether Telegram still counts the person as a member. */
  async admits(chat: ChatInfo, userId: string): Promise<boolean> {
    if (!this.access.allows(chat.kind, chat.chatId, userId)) return false;
    return chat.kind === 'dm' || this.admins.isMember(chat, userId);
  }

  /**
   * Webhook: ready while the server listens. Polling: ready while a long poll
   * completes within its timeout plus the grace, and on a standby instance
   * (another one polls).
   */
  /** Downloads a file of a message (getFile, then the file URL, which never leaves files.ts). */
  fetchAttachment(attachment: AttachmentMeta, limits: FetchLimits): Promise<Uint8Array> {
    const source = { api: this.bot.api, token: this.config.token!, ...(this.config.apiRoot ? { apiRoot: this.config.apiRoot } : {}) };
    return fetchTelegramFile(source, attachment, limits);
  }

  health(): ChannelHealth {
    if (this.stopped) return { ready: false, reason: 'telegram: stopped' };
    if (this.config.mode === 'webhook') return this.webhook ? { ready: true } : { ready: false, reason: 'telegram: the webhook server is not listening' };
    return this.polling?.health() ?? { ready: false, reason: 'telegram: not started' };
  }

  /**
   * getMe: proves the token and learns the bot's id and username. grammY retries
   * network errors here without end, so the attempt is bounded: an unreachable
   * Bot API is reported instead of a silent hang.
   */
  private async identify(): Promise<BotIdentity> {
    const deadline = AbortSignal.timeout(IDENTIFY_TIMEOUT_MS);
    const slow = setTimeout(
      () => {
        const reason = this.lastNetworkFailure;
        this.log.warn({ apiRoot: this.apiRootForLogs(), ...(reason ? { reason } : {}) }, `telegram: no answer from the Bot API at ${this.apiRootForLogs()} yet${reason ? ` (${reason})` : ''}; still trying`);
      },
      IDENTIFY_WARN_MS,
    );
    try {
      await this.bot.init(grammySignal(AbortSignal.any([this.lifetime.signal, deadline])));
    } catch (error) {
      if (isUnauthorized(error)) {
        throw new ChannelError(TELEGRAM, 'the bot token was rejected (401 Unauthorized); check TELEGRAM_BOT_TOKEN');
      }
      if (deadline.aborted && !this.lifetime.signal.aborted) {
        const reason = this.lastNetworkFailure ? `; last error: ${this.lastNetworkFailure}` : '';
        throw new ChannelError(TELEGRAM, `cannot reach the Bot API at ${this.apiRootForLogs()} (no answer to getMe within ${IDENTIFY_TIMEOUT_MS / 1000} s${reason}); check TELEGRAM_API_ROOT and the network`, true);
      }
      throw toChannelError(error, 'getMe');
    } finally {
      clearTimeout(slow);
    }
    return { id: this.bot.botInfo.id, username: this.bot.botInfo.username };
  }

  private apiRootForLogs(): string {
    return this.config.apiRoot ?? 'https://api.telegram.org';
  }

  /** Commands still work as text without the menu, so a failure here is only logged. */
  private async registerCommands(): Promise<void> {
    try {
      await registerCommands(this.bot.api, this.deps.commands);
    } catch (error) {
      this.log.warn({ error: describeError(error) }, 'telegram: setMyCommands failed');
    }
  }

  /** Skips duplicates, queues the update's event, then records it as handled. */
  private async receive(update: Update, ledger: UpdateLedger, router: UpdateRouter): Promise<void> {
    if (!ledger.claim(update.update_id)) {
      this.log.debug({ updateId: update.update_id }, 'telegram: duplicate update skipped');
      return;
    }
    try {
      // The offset moves past this update only after this returns: once its event is stored.
      await router.route(update);
    } catch (error) {
      this.log.error({ error: describeError(error), updateId: update.update_id }, 'telegram: update not handled');
    }
    await ledger.save();
  }

  private startPolling(ledger: UpdateLedger): void {
    this.polling = new PollingDuty({
      election: this.deps.election ?? soleElection,
      log: this.log,
      stallAfterMs: this.options.pollingTimeoutSeconds * 1000 + this.options.stallGraceMs,
      prepare: (signal) => this.prepareToPoll(ledger, signal),
      poller: {
        api: this.bot.api,
        log: this.log,
        timeoutSeconds: this.options.pollingTimeoutSeconds,
        retryDelayMs: this.options.pollingRetryDelayMs,
        initialOffset: () => ledger.nextOffset,
        handle: (update) =>
          this.bot.handleUpdate(update).catch((error: unknown) => {
            this.log.error({ error: describeError(error) }, 'telegram: update not handled');
          }),
      },
      onFatal: (reason) => {
        this.log.error({ reason }, 'telegram: polling stopped, the event stream ends');
        this.queue.close();
      },
    });
    this.polling.start();
  }

  /** Once elected: continues where the previous poller stopped, and makes sure no webhook is set. */
  private async prepareToPoll(ledger: UpdateLedger, signal: AbortSignal): Promise<void> {
    await ledger.load();
    try {
      await this.bot.api.deleteWebhook({ drop_pending_updates: false }, grammySignal(signal));
    } catch (error) {
      // Polling still works when no webhook was set; if one is, getUpdates reports it.
      if (!signal.aborted) this.log.warn({ error: describeError(error) }, 'telegram: deleteWebhook failed; polling anyway');
    }
  }

  private async startWebhook(): Promise<void> {
    const { url, host, port, path, secretToken } = this.config.webhook;
    // Without a configured secret, a random one still keeps strangers from posting fake updates.
    const secret = secretToken ?? randomBytes(32).toString('hex');
    this.webhook = await WebhookServer.listen({ bot: this.bot, host, port, path, secretToken: secret, log: this.log });
    try {
      await this.bot.api.setWebhook(url!, { secret_token: secret, allowed_updates: [...ALLOWED_UPDATES] });
    } catch (error) {
      await this.webhook.close();
      throw toChannelError(error, 'setWebhook');
    }
  }
}
