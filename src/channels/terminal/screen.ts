/**
 * The terminal's output side: bot messages, notices and the input prompt
 * sharing one screen with what the user is typing.
 *
 * The agent streams answers and rewrites status lines by editing one message.
 * So the last bot message stays "open": its line is not ended, and an edit
 * that extends it writes only the new characters in place. The message is
 * closed (newline, prompt redrawn) once it has been quiet for a moment, when
 * anything else is printed, or when the user presses a key.
 * On a TTY, printing first wipes the prompt line and redraws it afterwards, so
 * output never lands in the middle of a half-typed line, and a message that is
 * still the last output (open, or closed with only the prompt under it) is
 * redrawn in place when it changes otherwise: the cursor goes back up over
 * the rows it took. So is the message right above it (a tool's status line
 * that the answer followed), with the last one drawn again under it.
 * Elsewhere (a pipe, a test stream) the output is a plain transcript without
 * prompts, and nothing printed is ever erased.
 */
import { clearLine, clearScreenDown, cursorTo, moveCursor } from 'node:readline';
import { rowsOf } from './width.js';

export { rowsOf } from './width.js';

/** How the screen reaches the line editor that owns the prompt. */
export interface PromptHooks {
  /** Draws the prompt and whatever the user has typed so far. */
  redraw(): void;
  /** Whether the user has typed something not yet sent. */
  isTyping(): boolean;
}

/** How long an open message waits for further edits before the prompt comes back. */
export const SETTLE_MS = 250;
/** The same for an answer still streaming: edits come about a second apart. */
export const STREAMING_SETTLE_MS = 30_000;

const NO_PROMPT: PromptHooks = { redraw: () => undefined, isTyping: () => false };

/** The output stream seen as a screen with a prompt line at the bottom. */
export class Screen {
  /**
   * The bot message that is the last output, with everything written for it
   * (to redraw it in place). While `timer` runs its line is open; once closed,
   * only the prompt (or a status) line is under it.
   */
  private last?: { id: string; written: string; timer?: NodeJS.Timeout };
  /** The bot message printed right before `last`, with nothing else in between. */
  private previous?: { id: string; written: string };
  private statusShown = false;
  private prompt: PromptHooks = NO_PROMPT;

  /**
   * @param output where everything is written
   * @param tty whether `output` is a terminal (enables cursor movement, prompt and status)
   * @param settleMs quiet time after which an open message is closed
   */
  constructor(
    private readonly output: NodeJS.WritableStream,
    readonly tty: boolean,
    private readonly settleMs = SETTLE_MS,
  ) {}

  /** The output's width in columns (80 when it does not say). */
  get columns(): number {
    return (this.output as { columns?: number }).columns ?? 80;
  }

  /** The output's height in rows (unlimited when it does not say). */
  get rows(): number {
    return (this.output as { rows?: number }).rows ?? Infinity;
  }

  /** Connects the line editor once it exists; only used on a TTY. */
  attachPrompt(hooks: PromptHooks): void {
    if (this.tty) this.prompt = hooks;
  }

  /** Draws the prompt again after the user sent a line, which now stands under the last message. */
  showPrompt(): void {
    if (this.isOpen()) return;
    this.forgetMessages();
    if (!this.statusShown) this.prompt.redraw();
  }

  /** Prints whole lines (a notice, an approval prompt, an outcome) above the prompt. */
  printBlock(text: string): void {
    this.closeOpen(false);
    this.forgetMessages();
    this.wipeLine();
    this.output.write(`${text}\n`);
    this.prompt.redraw();
  }

  /**
   * Prints the start of a bot message and keeps it open for extending edits.
   * A `streaming` message stays open until an edit says it is finished; any
   * other settles (the prompt comes back) after a quiet moment.
   */
  startMessage(id: string, text: string, streaming = false): void {
    this.closeOpen(false);
    this.previous = this.last ? { id: this.last.id, written: this.last.written } : undefined;
    this.wipeLine();
    this.output.write(text);
    this.last = { id, written: text, timer: this.settleTimer(streaming) };
  }

  /**
   * Redraws message `id` with `text` in place, on a TTY while it is the last
   * output or the message right above it: the cursor goes back up over the
   * rows they took (and the prompt line under them, once closed), which are
   * cleared and printed again. A redrawn last message is open again. False
   * when that cannot be done: off a TTY, after other output, while the user
   * is typing under it, or when it is taller than the window.
   */
  replaceMessage(id: string, text: string, streaming = false): boolean {
    const { last, previous } = this;
    if (!this.tty || !last) return false;
    if (last.id === id) {
      if (!this.returnOver(rowsOf(last.written, this.columns))) return false;
      clearTimeout(last.timer);
      this.output.write(text);
      this.last = { id, written: text, timer: this.settleTimer(streaming) };
      return true;
    }
    if (previous?.id !== id || !this.returnOver(rowsOf(previous.written, this.columns) + rowsOf(last.written, this.columns))) return false;
    // The last message is drawn again as it was, still open or closed with the prompt under it.
    this.output.write(`${text}\n${last.written}${last.timer ? '' : '\n'}`);
    if (!last.timer) this.prompt.redraw();
    this.previous = { id, written: text };
    return true;
  }

  /**
   * Puts the cursor at the start of the last `rows` rows of output and clears
   * from there down; false, with nothing written, when they do not fit in the
   * window (the cursor cannot go above it) or the user is typing under them.
   */
  private returnOver(rows: number): boolean {
    const open = this.isOpen();
    if (rows + (open ? 0 : 1) > this.rows || (!open && this.prompt.isTyping())) return false;
    if (open) {
      cursorTo(this.output, 0);
      if (rows > 1) moveCursor(this.output, 0, -(rows - 1));
    } else {
      this.wipeLine();
      moveCursor(this.output, 0, -rows);
    }
    clearScreenDown(this.output);
    return true;
  }

  /** Appends to message `id` in place; false when it is not the open message. */
  extendMessage(id: string, tail: string, streaming = false): boolean {
    const last = this.last;
    if (last?.id !== id || !last.timer) return false;
    clearTimeout(last.timer);
    this.output.write(tail);
    last.written += tail;
    last.timer = this.settleTimer(streaming);
    return true;
  }

  /**
   * Shows a transient status (e.g. "thinking") in place of the prompt, on a TTY
   * only, and never over a streaming message or a half-typed line.
   */
  showStatus(text: string): void {
    if (!this.tty || this.isOpen() || this.prompt.isTyping()) return;
    this.wipeLine();
    this.output.write(text);
    this.statusShown = true;
  }

  /** Called before the line editor handles a key, so the key lands on the prompt line. */
  beforeKey(): void {
    if (this.isOpen()) this.closeOpen(true);
    else if (this.statusShown) {
      this.wipeLine();
      this.prompt.redraw();
    }
  }

  /** Ends the open message and removes the prompt: input is over. */
  close(): void {
    this.closeOpen(false);
    this.forgetMessages();
    this.wipeLine();
    this.prompt = NO_PROMPT;
  }

  private isOpen(): boolean {
    return this.last?.timer !== undefined;
  }

  /** Something else now stands under the messages: they can no longer be redrawn in place. */
  private forgetMessages(): void {
    this.last = undefined;
    this.previous = undefined;
  }

  /** Closes the open message after a quiet moment; a streaming one waits longer (the next edit may be seconds away). */
  private settleTimer(streaming = false): NodeJS.Timeout {
    const timer = setTimeout(() => this.closeOpen(true), streaming ? STREAMING_SETTLE_MS : this.settleMs);
    // A message waiting to settle is no reason to keep the process alive.
    timer.unref();
    return timer;
  }

  /** Ends the open message's line; it stays the last output until something else is printed. */
  private closeOpen(redraw: boolean): void {
    const last = this.last;
    if (!last?.timer) return;
    clearTimeout(last.timer);
    last.timer = undefined;
    this.output.write('\n');
    if (redraw) this.prompt.redraw();
  }

  /** Clears the prompt or status line so the next write starts at column 0. */
  private wipeLine(): void {
    this.statusShown = false;
    if (!this.tty) return;
    cursorTo(this.output, 0);
    clearLine(this.output, 0);
  }
}
