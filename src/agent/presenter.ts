/**
 * Shows a running turn to the people in a chat: the typing indicator, a status
 * line while a slow tool runs, and long answers streamed by editing one message
 * no faster than the platform allows.
 */
import { IN_PROGRESS_MARK, type ChannelCapabilities, type ChatAddress, type SentMessage } from '../channels/types.js';
import type { Outbox } from './outbox.js';
import { cleanReply } from './reasoning.js';

/** Timing of what the presenter shows. */
export interface PresenterTiming {
  /** A tool must run this long before a status line appears. */
  statusDelayMs: number;
  /** A reply must be streaming this long, and this long, before it is shown in progress. */
  streamDelayMs: number;
  streamMinChars: number;
}

/** Defaults: quick turns produce exactly one message, the answer. */
export const DEFAULT_PRESENTER_TIMING: PresenterTiming = { statusDelayMs: 1_500, streamDelayMs: 1_500, streamMinChars: 200 };

/** The presentation of one turn. */
export class TurnPresenter {
  private typingTimer: NodeJS.Timeout | undefined;
  private statusTimer: NodeJS.Timeout | undefined;
  private status: SentMessage | undefined;
  private statusText = '';
  private readonly toolsUsed: string[] = [];
  private stream: { message?: SentMessage; text: string; startedAt: number; lastEditAt: number; pending?: Promise<void> } | undefined;
  private closed = false;

  constructor(
    private readonly outbox: Outbox,
    private readonly chat: ChatAddress,
    private readonly capabilities: ChannelCapabilities,
    private readonly timing: PresenterTiming = DEFAULT_PRESENTER_TIMING,
  ) {}

  /** Starts the typing indicator. */
  start(): void {
    void this.outbox.typing(this.chat);
    const every = this.capabilities.typingIntervalMs;
    if (every > 0) this.typingTimer = setInterval(() => void this.outbox.typing(this.chat), every);
  }

  /** A new model call begins: its text may stream. */
  beginReply(): void {
    this.stream = { text: '', startedAt: Date.now(), lastEditAt: 0 };
  }

  /** A model call that continues the reply being streamed (it was cut by the output limit): its text follows on. */
  continueReply(): void {
    if (!this.stream) this.beginReply();
  }

  /** A piece of the model's reply arrived. */
  textDelta(delta: string): void {
    const stream = this.stream;
    if (!stream || this.closed) return;
    stream.text += delta;
    const now = Date.now();
    const due = now - stream.startedAt >= this.timing.streamDelayMs && stream.text.length >= this.timing.streamMinChars;
    const spaced = now - stream.lastEditAt >= Math.max(this.capabilities.minEditIntervalMs, 1_000);
    if (!due || !spaced || stream.pending || stream.text.length > this.capabilities.maxMessageLength - 10) return;
    stream.lastEditAt = now;
    // The stream is raw model output: hide reasoning blocks and tool tags as the final answer does.
    const shown = `${cleanReply(stream.text)}${IN_PROGRESS_MARK}`;
    if (shown.length < 3) return;
    stream.pending = (stream.message ? this.outbox.edit(stream.message, shown) : this.outbox.send(this.chat, shown))
      .then((sent) => {
        if (sent) stream.message = sent;
      })
      .finally(() => {
        stream.pending = undefined;
      });
  }

  /** The model's reply turned out to be tool calls: a streamed preamble stays as it is. */
  async endReplyWithTools(): Promise<void> {
    const stream = this.stream;
    this.stream = undefined;
    if (stream?.message) {
      await stream.pending;
      await this.outbox.edit(stream.message, cleanReply(stream.text) || '…');
    }
  }

  /** Tools of a batch start running. */
  toolsStarted(names: string[]): void {
    this.toolsUsed.push(...names);
    this.statusText = `⚙️ Running ${names.map((name) => `\`${name}\``).join(', ')}…`;
    if (this.status) {
      void this.outbox.edit(this.status, this.statusText);
      return;
    }
    clearTimeout(this.statusTimer);
    this.statusTimer = setTimeout(() => {
      if (this.closed || this.status) return;
      void this.outbox.send(this.chat, this.statusText).then((sent) => {
        this.status = sent;
      });
    }, this.timing.statusDelayMs);
  }

  /** The batch finished. */
  toolsFinished(): void {
    clearTimeout(this.statusTimer);
    this.statusTimer = undefined;
  }

  /**
   * Shows the final text of the turn (editing the streamed message, if any) and
   * stops typing. In a group the answer replies to the message it answers.
   * Resolves once the answer is sent; the status line is updated after it.
   */
  async finish(text: string, replyTo?: string): Promise<void> {
    this.close();
    const stream = this.stream;
    this.stream = undefined;
    if (stream?.message) {
      await stream.pending;
      await this.outbox.edit(stream.message, text);
    } else {
      await this.outbox.send(this.chat, text, replyTo ? { replyTo } : {});
    }
    this.settleStatus();
  }

  /**
   * Rewrites the status line to list the tools used. Not awaited, and after the
   * answer: where messages are paced per chat (Telegram, a second apart), an
   * edit in front of the answer would hold the answer back, and the turn with it.
   */
  private settleStatus(): void {
    if (!this.status) return;
    const used = [...new Set(this.toolsUsed)].map((name) => `\`${name}\``).join(', ');
    void this.outbox.edit(this.status, `⚙️ Used ${used}`);
  }

  /** Stops typing and timers without sending anything (the turn ended silently, e.g. for an approval prompt). */
  close(): void {
    this.closed = true;
    clearInterval(this.typingTimer);
    clearTimeout(this.statusTimer);
  }
}
