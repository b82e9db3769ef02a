/**
 * The terminal's output side: bot messages, notices and the input prompt
 * sharing one screen with what the user is typing.
 *
 * A terminal cannot edit what it printed, yet the agent streams answers by
 * editing one message. So the last bot message stays "open": its line is not
 * ended, and an edit that extends it writes only the new characters in place.
 * The message is closed (newline, prompt redrawn) once it has been quiet for
 * a moment, when anything else is printed, or when the user presses a key.
 * On a TTY, printing first wipes the prompt line and redraws it afterwards, so
 * output never lands in the middle of a half-typed line; elsewhere (a pipe,
 * a test stream) the output is a plain transcript without prompts.
 */
import { clearLine, clearScreenDown, cursorTo, moveCursor } from 'node:readline';

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
  /** The message still being written to, and everything written for it (to redraw it in place). */
  private open?: { id: string; timer: NodeJS.Timeout; written: string };
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

  /** Connects the line editor once it exists; only used on a TTY. */
  attachPrompt(hooks: PromptHooks): void {
    if (this.tty) this.prompt = hooks;
  }

  /** Draws the prompt again (after the user sent a line); nothing off a TTY. */
  showPrompt(): void {
    if (!this.open && !this.statusShown) this.prompt.redraw();
  }

  /** Prints whole lines (a notice, an approval prompt, an outcome) above the prompt. */
  printBlock(text: string): void {
    this.closeOpen(false);
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
    this.wipeLine();
    this.output.write(text);
    this.open = { id, timer: this.settleTimer(streaming), written: text };
  }

  /** Whether message `id` is still the last output (open for edits). */
  isOpen(id: string): boolean {
    return this.open?.id === id;
  }

  /**
   * Redraws the open message `id` with `text` in place (on a TTY: the cursor
   * goes back over the lines it took, which are cleared); false when it is not
   * the open message or the output is not a TTY.
   */
  replaceMessage(id: string, text: string, streaming = false): boolean {
    const open = this.open;
    if (!this.tty || open?.id !== id) return false;
    clearTimeout(open.timer);
    const rows = rowsOf(open.written, (this.output as { columns?: number }).columns ?? 80);
    cursorTo(this.output, 0);
    if (rows > 1) moveCursor(this.output, 0, -(rows - 1));
    clearScreenDown(this.output);
    this.output.write(text);
    open.written = text;
    open.timer = this.settleTimer(streaming);
    return true;
  }

  /** Appends to message `id` in place; false when it is no longer the open message. */
  extendMessage(id: string, tail: string, streaming = false): boolean {
    if (this.open?.id !== id) return false;
    clearTimeout(this.open.timer);
    this.output.write(tail);
    this.open.written += tail;
    this.open.timer = this.settleTimer(streaming);
    return true;
  }

  /**
   * Shows a transient status (e.g. "thinking") in place of the prompt, on a TTY
   * only, and never over a streaming message or a half-typed line.
   */
  showStatus(text: string): void {
    if (!this.tty || this.open || this.prompt.isTyping()) return;
    this.wipeLine();
    this.output.write(text);
    this.statusShown = true;
  }

  /** Called before the line editor handles a key, so the key lands on the prompt line. */
  beforeKey(): void {
    if (this.open) this.closeOpen(true);
    else if (this.statusShown) {
      this.wipeLine();
      this.prompt.redraw();
    }
  }

  /** Ends the open message and removes the prompt: input is over. */
  close(): void {
    this.closeOpen(false);
    this.wipeLine();
    this.prompt = NO_PROMPT;
  }

  /** Closes the open message after a quiet moment; a streaming one waits longer (the next edit may be seconds away). */
  private settleTimer(streaming = false): NodeJS.Timeout {
    const timer = setTimeout(() => this.closeOpen(true), streaming ? STREAMING_SETTLE_MS : this.settleMs);
    // A message waiting to settle is no reason to keep the process alive.
    timer.unref();
    return timer;
  }

  private closeOpen(redraw: boolean): void {
    if (!this.open) return;
    clearTimeout(this.open.timer);
    this.open = undefined;
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

// eslint-disable-next-line no-control-regex -- measuring what escape sequences do not take up
const ESCAPES = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** Screen rows `text` takes in a terminal `columns` wide (long lines wrap). */
export function rowsOf(text: string, columns: number): number {
  return text.split('\n').reduce((rows, line) => rows + Math.max(1, Math.ceil([...line.replace(ESCAPES, '')].length / Math.max(1, columns))), 0);
}
