/**
 * Shows a running turn to the people in a chat: the typing indicator, a status
 * line while a slow tool runs (with its elapsed time, also for a tool that runs
 * after an approval), and long answers streamed by editing one message no
 * faster than the platform allows. It also knows what the turn is doing and
 * since when, for /status.
 */
import { IN_PROGRESS_MARK, type ChannelCapabilities, type ChatAddress, type SendOptions, type SentMessage } from '../channels/types.js';
import type { Outbox } from '../engine/outbox.js';
import { cleanReply } from '../engine/reasoning.js';
import { formatElapsed } from '../engine/elapsed.js';

/** Timing of what the presenter shows. */
export interface PresenterTiming {
  /** A tool must run this long before a status line appears. */
  statusDelayMs: number;
  /** A reply must be streaming this long, and this long, before it is shown in progress. */
  streamDelayMs: number;
  streamMinChars: number;
}

/** What a turn is doing, and since when. */
export interface TurnActivity {
  /** In words, e.g. "running `http_fetch`". */
  what: string;
  since: number;
}

/** How often a shown status line's elapsed time is brought up to date, at the fastest. */
const ELAPSED_TICK_MS = 1_000;
/** Edits of the status line are kept to one in this many of the platform's edit intervals. */
const ELAPSED_EDIT_SPACING = 5;

/** Defaults: quick turns produce exactly one message, the answer. */
export const DEFAULT_PRESENTER_TIMING: PresenterTiming = { statusDelayMs: 1_500, streamDelayMs: 1_500, streamMinChars: 200 };

/** The presentation of one turn. */
export class TurnPresenter {
  private typingTimer: NodeJS.Timeout | undefined;
  private statusTimer: NodeJS.Timeout | undefined;
  private status: SentMessage | undefined;
  private statusText = '';
  private running: { names: string[]; since: number } | undefined;
  private elapsedTimer: NodeJS.Timeout | undefined;
  private doing: TurnActivity = { what: 'starting', since: Date.now() };
  private readonly toolsUsed: string[] = [];
  private stream: { message?: SentMessage; text: string; startedAt: number; lastEditAt: number; pending?: Promise<void> } | undefined;
  private closed = false;
  /**
   * Told the ids of the message a reply is streaming into once it is shown,
   * and undefined when it stops being one (the reply turned to tool calls), so
   * that the turn's journal can name it: after a crash the answer replaces it.
   */
  onDraft: ((ids: readonly string[] | undefined) => void) | undefined;

  constructor(
    private readonly outbox: Outbox,
    private readonly chat: ChatAddress,
    private readonly capabilities: ChannelCapabilities,
    private readonly timing: PresenterTiming = DEFAULT_PRESENTER_TIMING,
  ) {}

  /** Starts the typing indicator; again while it runs changes nothing. */
  start(): void {
    if (this.typingTimer) return;
    void this.outbox.typing(this.chat);
    const every = this.capabilities.typingIntervalMs;
    if (every > 0) this.typingTimer = setInterval(() => void this.outbox.typing(this.chat), every);
  }

  /** What the turn is doing now, and since when. */
  activity(): TurnActivity {
    return { ...this.doing };
  }

  /** A new model call begins: its text may stream. */
  beginReply(): void {
    this.stream = { text: '', startedAt: Date.now(), lastEditAt: 0 };
    this.doing = { what: 'waiting for the model', since: Date.now() };
  }

  /** A model call that continues the reply being streamed (it was cut by the output limit): its text follows on. */
  continueReply(): void {
    if (!this.stream) this.beginReply();
  }

  /** A piece of the model's reply arrived. */
  textDelta(delta: string): void {
    const stream = this.stream;
    if (!stream || this.closed) return;
    if (!stream.text) this.doing = { what: 'writing the answer', since: Date.now() };
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
        if (!sent) return;
        const newDraft = stream.message?.ids.join() !== sent.ids.join();
        stream.message = sent;
        if (newDraft && this.stream === stream) this.onDraft?.(sent.ids);
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
      this.onDraft?.(undefined);
    }
  }

  /**
   * Takes up the message an earlier process was streaming this turn's reply
   * into (named by the turn's journal): {@link finish} edits it into the
   * answer instead of sending the answer as a new message.
   */
  adoptDraft(ids: readonly string[]): void {
    this.stream = { message: { chat: this.chat, ids: [...ids] }, text: '', startedAt: Date.now(), lastEditAt: Date.now() };
  }

  /** Tools of a batch start running (also a call that runs once approved). */
  toolsStarted(names: string[]): void {
    this.toolsUsed.push(...names);
    const since = Date.now();
    this.running = { names, since };
    this.doing = { what: `running ${names.map((name) => `\`${name}\``).join(', ')}`, since };
    this.statusText = this.runningText();
    if (this.status) {
      void this.outbox.edit(this.status, this.statusText);
      this.tickElapsed();
      return;
    }
    clearTimeout(this.statusTimer);
    this.statusTimer = setTimeout(() => {
      if (this.closed || this.status) return;
      this.statusText = this.runningText();
      void this.outbox.send(this.chat, this.statusText).then((sent) => {
        this.status = sent;
        this.tickElapsed();
      });
    }, this.timing.statusDelayMs);
  }

  /** The batch finished. */
  toolsFinished(): void {
    clearTimeout(this.statusTimer);
    this.statusTimer = undefined;
    clearTimeout(this.elapsedTimer);
    this.elapsedTimer = undefined;
    this.running = undefined;
    this.doing = { what: 'thinking', since: Date.now() };
  }

  /** "⚙️ Running `x`… 12 s" for the running batch. */
  private runningText(): string {
    const running = this.running;
    if (!running) return this.statusText;
    const names = running.names.map((name) => `\`${name}\``).join(', ');
    const seconds = Math.floor((Date.now() - running.since) / 1_000);
    return `⚙️ Running ${names}…${seconds >= 1 ? ` ${formatElapsed(seconds)}` : ''}`;
  }

  /** Brings the shown status line's elapsed time up to date while the batch runs, no faster than the platform likes edits. */
  private tickElapsed(): void {
    clearTimeout(this.elapsedTimer);
    if (!this.running || !this.status || this.closed) return;
    const every = Math.max(ELAPSED_TICK_MS, this.capabilities.minEditIntervalMs * ELAPSED_EDIT_SPACING);
    this.elapsedTimer = setTimeout(() => {
      if (!this.running || !this.status || this.closed) return;
      const text = this.runningText();
      if (text !== this.statusText) {
        this.statusText = text;
        void this.outbox.edit(this.status, text);
      }
      this.tickElapsed();
    }, every);
    this.elapsedTimer.unref();
  }

  /**
   * Shows the final text of the turn (editing the streamed message, if any) and
   * stops typing. In a group the answer replies to the message it answers.
   * Resolves once the answer is sent; the status line is updated after it
   * (before it where edits may repeat the message: {@link settleStatus}).
   * `options` name the answer (and say when it is being sent again), so that a
   * second sending is recognised where the platform can tell (SendOptions).
   */
  async finish(text: string, options: SendOptions = {}): Promise<void> {
    this.close();
    const stream = this.stream;
    this.stream = undefined;
    // Where an edit may print the status line again at the end (a terminal off a TTY), it is
    // settled before the answer, so that it reads in the order things happened. A streamed answer
    // already on screen keeps the status line after it rather than be cut in two by it.
    const settleFirst = this.capabilities.editsMayRepeat === true && !stream?.message;
    if (settleFirst) await this.settleStatus();
    if (stream?.message) {
      await stream.pending;
      await this.outbox.edit(stream.message, text);
    } else {
      await this.outbox.send(this.chat, text, options);
    }
    if (!settleFirst) void this.settleStatus();
  }

  /**
   * Rewrites the status line to list the tools used. Elsewhere not awaited, and
   * after the answer: where messages are paced per chat (Telegram, a second
   * apart), an edit in front of the answer would hold the answer back, and the
   * turn with it.
   */
  private async settleStatus(): Promise<void> {
    if (!this.status) return;
    const used = [...new Set(this.toolsUsed)].map((name) => `\`${name}\``).join(', ');
    await this.outbox.edit(this.status, `⚙️ Used ${used}`);
  }

  /** Stops typing and timers without sending anything (the turn ended silently, e.g. for an approval prompt). */
  close(): void {
    this.closed = true;
    clearInterval(this.typingTimer);
    clearTimeout(this.statusTimer);
    clearTimeout(this.elapsedTimer);
  }
}
