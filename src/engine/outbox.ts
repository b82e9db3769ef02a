/**
 * Everything the agent sends goes through the outbox: secrets are redacted, and
 * a failed platform call is retried before it is given up and logged, so that a
 * transient failure never loses a reply. A retry of a message in several parts
 * goes on from the part that failed; a named answer's parts are put on record
 * as they go, so that sending it again after a crash skips them (deliveries.ts).
 */
import { threadKeyOf, type ApprovalOutcome, type ApprovalPrompt, type Channel, type ChatAddress, type OutboundFile, type SendOptions, type SentMessage } from '../channels/types.js';
import { ChannelError } from '../errors.js';
import type { Logger } from '../log.js';
import { memoryLedger, type DeliveryLog } from './deliveries.js';
import type { AgentEventMap, AgentEvents } from './events.js';

/** How a file send ended (see Outbox.sendFile); the tools' FileSendOutcome. */
export type FileDelivery = { ok: true; before: boolean } | { ok: false; reason: 'refused' | 'failed' | 'uncertain'; detail: string };

/** A platform's refusal in a few words for the model, without the channel's name in front. */
function detailOf(error: unknown, channel: string): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.startsWith(`${channel}: `) ? message.slice(channel.length + 2) : message;
}

/** Retry schedule of outbound calls, after the adapter's own retries. */
const RETRY_DELAYS_MS = [500, 2_000, 5_000];

/** Sends through channels with redaction and retries. */
export class Outbox {
  /** Files being sent now, by name. */
  private readonly filesGoing = new Map<string, Promise<FileDelivery>>();

  constructor(
    private readonly channels: ReadonlyMap<string, Channel>,
    /** Removes secrets from text that leaves the process. */
    readonly redact: (text: string) => string,
    private readonly log: Logger,
    private readonly events?: AgentEvents,
    /** Where named answers' sent parts are recorded; in memory only without it. */
    private readonly deliveries?: DeliveryLog,
  ) {}

  /** The channel of a chat. */
  channelOf(chat: ChatAddress): Channel | undefined {
    return this.channels.get(chat.channel);
  }

  /** Sends text (as a reply to `replyTo`, where the platform shows replies); undefined when every attempt failed (logged). */
  async send(chat: ChatAddress, text: string, options: SendOptions = {}): Promise<SentMessage | undefined> {
    const key = options.idempotencyKey;
    const parts = options.parts ?? (key && this.deliveries ? await this.deliveries.ledger(key, options.resumed === true) : memoryLedger());
    return this.attempt('send', chat, (channel) => channel.send(chat, this.redact(text), { ...options, parts }));
  }

  /**
   * Sends a named message that must arrive once (a job's result, a reminder, a
   * restart notice): nothing is posted when it went out whole before, the
   * parts an earlier attempt sent are skipped, and once it is out it is put on
   * record as sent. `name` says what it is (`job:<id>:result`). Resolves
   * with the message (the one sent before, when it was), or undefined when
   * every attempt failed (logged).
   */
  async deliver(chat: ChatAddress, text: string, name: string, options: Pick<SendOptions, 'replyTo' | 'after' | 'resumed'> = {}): Promise<SentMessage | undefined> {
    const before = await this.deliveries?.completed(name);
    if (before) {
      this.log.debug({ channel: chat.channel, name }, 'named message went out before; not sending it again');
      return { chat, ids: before };
    }
    const parts = this.deliveries ? await this.deliveries.ledger(name, true) : memoryLedger();
    const sent = await this.send(chat, text, { ...options, idempotencyKey: name, parts });
    if (sent) await this.deliveries?.complete(name, sent.ids);
    return sent;
  }

  /**
   * Sends a file once under `name` (`file:<thread>:<turn>:<hash>`): nothing is
   * posted when it went out before; a send that started and never ended (the
   * process died during the platform call) is not tried again, since the
   * platform may have it (`uncertain`). Its start is on record before the
   * platform call and its end after; the adapter's retries (429, 5xx,
   * connection errors) happen in between. The caption is redacted.
   */
  async sendFile(chat: ChatAddress, file: OutboundFile, name: string, options: Pick<SendOptions, 'replyTo'> = {}): Promise<FileDelivery> {
    // The same name sent again while it is going out (two calls of one batch) waits for it and posts nothing.
    const going = this.filesGoing.get(name);
    if (going) return going.then((delivery) => (delivery.ok ? { ok: true, before: true } : delivery));
    const sending = this.sendFileOnce(chat, file, name, options);
    this.filesGoing.set(name, sending);
    try {
      return await sending;
    } finally {
      this.filesGoing.delete(name);
    }
  }

  private async sendFileOnce(chat: ChatAddress, file: OutboundFile, name: string, options: Pick<SendOptions, 'replyTo'>): Promise<FileDelivery> {
    const channel = this.channelOf(chat);
    if (!channel?.sendFile) return { ok: false, reason: 'refused', detail: `${chat.channel} cannot send files` };
    if (await this.deliveries?.completed(name)) {
      this.log.info({ channel: chat.channel }, 'a file went out before; not sending it again');
      return { ok: true, before: true };
    }
    if (await this.deliveries?.interrupted(name)) {
      this.log.warn({ channel: chat.channel }, 'sending a file was cut short by a restart; not sending it again');
      return { ok: false, reason: 'uncertain', detail: 'an earlier attempt was cut short' };
    }
    await this.deliveries?.begin(name);
    const shown = file.caption === undefined ? file : { ...file, caption: this.redact(file.caption) };
    const started = Date.now();
    let sent: SentMessage;
    try {
      sent = await channel.sendFile(chat, shown, { ...options, idempotencyKey: name });
    } catch (error) {
      // The platform said no, or could not be reached after the adapter's retries: this attempt is over.
      await this.deliveries?.ended(name);
      this.events?.emit('message.out', { channel: chat.channel, thread: threadKeyOf(chat), type: 'file', ok: false, durationMs: Date.now() - started });
      this.log.warn({ err: error, channel: chat.channel }, 'file not sent');
      const retryable = error instanceof ChannelError && error.retryable;
      // The error may quote a URL with the bot's token (Telegram's): it reaches the model redacted.
      return { ok: false, reason: retryable ? 'failed' : 'refused', detail: this.redact(detailOf(error, chat.channel)) };
    }
    await this.deliveries?.complete(name, sent.ids);
    await this.deliveries?.ended(name);
    this.events?.emit('message.out', { channel: chat.channel, thread: threadKeyOf(chat), type: 'file', ok: true, durationMs: Date.now() - started });
    return { ok: true, before: false };
  }

  /** Drops the record of a named answer's sent parts (its turn is closed on record). */
  async forget(idempotencyKey: string): Promise<void> {
    await this.deliveries?.forget(idempotencyKey);
  }

  /** Edits a sent message; falls back to a new message when editing keeps failing. */
  async edit(message: SentMessage, text: string): Promise<SentMessage | undefined> {
    const edited = await this.attempt('edit', message.chat, (channel) => channel.edit(message, this.redact(text)));
    return edited ?? this.send(message.chat, text);
  }

  /** Shows typing; failures are ignored (cosmetic). */
  async typing(chat: ChatAddress): Promise<void> {
    try {
      await this.channelOf(chat)?.typing(chat);
    } catch (error) {
      this.log.debug({ err: error, channel: chat.channel }, 'typing failed');
    }
  }

  /** Shows an approval prompt. */
  sendApproval(chat: ChatAddress, prompt: ApprovalPrompt): Promise<SentMessage | undefined> {
    const shown = this.redactPrompt(prompt);
    return this.attempt('approval', chat, (channel) => channel.sendApproval(chat, shown));
  }

  /** Edits an approval prompt to show its outcome. */
  async resolveApproval(message: SentMessage, prompt: ApprovalPrompt, outcome: ApprovalOutcome): Promise<void> {
    const shown = this.redactPrompt(prompt);
    await this.attempt('resolve', message.chat, (channel) => channel.resolveApproval(message, shown, outcome).then(() => true));
  }

  /** The prompt with every text the model or a tool wrote redacted: arguments, summary and the model's reason. */
  private redactPrompt(prompt: ApprovalPrompt): ApprovalPrompt {
    const shown = { ...prompt, summary: this.redact(prompt.summary) };
    if (prompt.args !== undefined) shown.args = this.redact(prompt.args);
    if (prompt.reason !== undefined) shown.reason = this.redact(prompt.reason);
    return shown;
  }

  /** Runs an outbound call with retries, and reports it as a `message.out` event. */
  private async attempt<T>(what: AgentEventMap['message.out']['type'], chat: ChatAddress, call: (channel: Channel) => Promise<T>): Promise<T | undefined> {
    const started = Date.now();
    const result = await this.retried(what, chat, call);
    this.events?.emit('message.out', { channel: chat.channel, thread: threadKeyOf(chat), type: what, ok: result !== undefined, durationMs: Date.now() - started });
    return result;
  }

  private async retried<T>(what: string, chat: ChatAddress, call: (channel: Channel) => Promise<T>): Promise<T | undefined> {
    const channel = this.channelOf(chat);
    if (!channel) {
      this.log.error({ channel: chat.channel }, `cannot ${what}: channel not running`);
      return undefined;
    }
    for (let attempt = 0; ; attempt++) {
      try {
        return await call(channel);
      } catch (error) {
        const delay = RETRY_DELAYS_MS[attempt];
        if (delay === undefined) {
          this.log.error({ err: error, channel: chat.channel, chat: chat.chatId }, `${what} failed; giving up`);
          return undefined;
        }
        this.log.warn({ err: error, channel: chat.channel, attempt: attempt + 1 }, `${what} failed; retrying`);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}
