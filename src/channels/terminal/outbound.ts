/**
 * What the bot prints at the terminal: messages, edits of them, the
 * "thinking" status, approval prompts and their outcomes, and notices.
 *
 * `send` prints at once; `edit` prints only the new tail when the text extends
 * the open message, redraws a message that is still the last output in place
 * on a TTY (see {@link Screen}), and otherwise prints it again, since nothing
 * printed can be erased off a TTY. A streamed answer's
 * in-progress mark is left out: the open line shows that more is coming, and
 * without the mark each edit of the stream extends what is on screen.
 */
import { approvalOutcomeLine } from '../approval-text.js';
import { IN_PROGRESS_MARK, type ApprovalOutcome, type ApprovalPrompt, type SentMessage } from '../types.js';
import { localAddress } from './access.js';
import { missingMessageId } from './errors.js';
import { promptQuestion } from './inbound.js';
import { renderMarkdown, terminalText, type TerminalStyle } from './render.js';
import type { Screen } from './screen.js';

/** Messages remembered for edits; older ones are simply printed again when edited. */
const REMEMBERED_MESSAGES = 200;

/** Prints the bot's side of the conversation on a {@link Screen}. */
export class TerminalOutbound {
  /** Text on screen per sent message id, for edits. */
  private readonly printed = new Map<string, string>();
  private nextId = 1;

  constructor(
    private readonly screen: Screen,
    private readonly style: TerminalStyle,
    private readonly botName: string,
  ) {}

  /** Prints a bot message; it stays open for streaming edits. */
  send(text: string): SentMessage {
    const id = this.newId();
    const shown = this.shown(text);
    this.screen.startMessage(id, this.prefixed(shown), isStreaming(text));
    this.remember(id, shown);
    return { chat: localAddress(), ids: [id] };
  }

  /**
   * Prints the new tail of an extended message while it is open; on a TTY a
   * message that is still the last output is otherwise redrawn in place. When
   * neither can be done, the text as written is continued (`… tail`) or the
   * message printed again.
   */
  edit(message: SentMessage, text: string): SentMessage {
    const id = message.ids[0];
    if (!id) throw missingMessageId();
    const streaming = isStreaming(text);
    const shown = this.shown(text);
    const before = this.printed.get(id);
    if (before === shown) return message;
    if (this.extend(id, before, shown, streaming) || this.screen.replaceMessage(id, this.prefixed(shown), streaming)) {
      this.remember(id, shown);
      return message;
    }
    // A finished answer whose rendering cannot replace its streamed text stays as written.
    const written = shownText(text);
    if (this.extend(id, before, written, streaming)) {
      this.remember(id, written);
      return message;
    }
    const tail = before !== undefined && written.startsWith(before) ? written.slice(before.length) : undefined;
    this.screen.startMessage(id, this.prefixed(tail === undefined ? shown : `…${tail}`), streaming);
    this.remember(id, tail === undefined ? shown : written);
    return message;
  }

  /** Writes the new tail when `text` extends what the open message `id` shows. */
  private extend(id: string, before: string | undefined, text: string, streaming: boolean): boolean {
    return before !== undefined && text.startsWith(before) && this.screen.extendMessage(id, text.slice(before.length), streaming);
  }

  /** What the terminal prints of a message: streamed or plain text as written, a finished one with markdown rendered on a TTY. */
  private shown(text: string): string {
    const clean = shownText(text);
    if (!this.screen.tty || isStreaming(text) || !MARKDOWN.test(clean)) return clean;
    return renderMarkdown(clean, Math.max(20, this.screen.columns - this.botName.length - 2), this.style.color);
  }

  /** Shows `… thinking` in place of the prompt, on a TTY only. */
  typing(): void {
    this.screen.showStatus(this.style.dim('… thinking'));
  }

  /**
   * Prints an approval prompt. On a TTY the question is the input prompt
   * itself (the adapter sets it); elsewhere it is printed under the prompt.
   */
  approval(prompt: ApprovalPrompt): SentMessage {
    const text = terminalPromptText(prompt, this.style);
    const question = this.screen.tty ? '' : `\n${this.style.bold(promptQuestion(prompt.actions).trimEnd())}`;
    this.screen.printBlock(`${text}${question}`);
    return { chat: localAddress(), ids: [this.newId()] };
  }

  /** Prints how an approval ended. */
  outcome(outcome: ApprovalOutcome): void {
    this.screen.printBlock(terminalText(approvalOutcomeLine(outcome)));
  }

  /** Prints a notice (an answer to a press, a hint) dimmed, apart from the conversation. */
  notice(text: string): void {
    this.screen.printBlock(this.style.dim(terminalText(text)));
  }

  private prefixed(text: string): string {
    return `${this.style.botName(`${this.botName}:`)} ${text}`;
  }

  private remember(id: string, text: string): void {
    this.printed.delete(id);
    this.printed.set(id, text);
    if (this.printed.size > REMEMBERED_MESSAGES) this.printed.delete(this.printed.keys().next().value!);
  }

  private newId(): string {
    return `t${this.nextId++}`;
  }
}

/** What the terminal prints of a message: safe characters, without the in-progress mark. */
function shownText(text: string): string {
  const clean = terminalText(text);
  return clean.endsWith(IN_PROGRESS_MARK) ? clean.slice(0, -IN_PROGRESS_MARK.length) : clean;
}

/**
 * A prompt as the terminal shows it: the headline with the tool, what it will
 * do, the model's reason, each argument on its own line, and the expiry. No
 * "only X can answer": one person sits at the keyboard. Each text is cleaned
 * of control characters before it is styled, so the styles' own escape codes
 * survive and nothing else does.
 */
export function terminalPromptText(prompt: ApprovalPrompt, style: TerminalStyle, now = Date.now()): string {
  const lines = [style.bold(terminalText(prompt.tool ? `${prompt.title}: ${prompt.tool}` : prompt.title))];
  if (prompt.grant) lines.push(...terminalText(prompt.grant).split('\n').map((line) => style.bold(line)));
  lines.push(terminalText(prompt.summary));
  if (prompt.reason) lines.push(terminalText(`Reason: ${prompt.reason}`));
  if (prompt.args !== undefined) lines.push(...argumentLines(prompt.args).map(terminalText));
  const minutes = Math.max(1, Math.round((prompt.expiresAt - now) / 60_000));
  lines.push(style.dim(`Expires in ${minutes} min.`));
  return lines.join('\n');
}

/** Arguments (JSON text) one per line, `  name: value`; text that is not a JSON object is shown as it is, indented. */
function argumentLines(args: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return args.split('\n').map((line) => `  ${line}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return [`  ${args}`];
  return Object.entries(parsed as Record<string, unknown>).map(([name, value]) => `  ${name}: ${typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value)}`);
}

/** Whether an edit is a streamed answer still being written. */
function isStreaming(text: string): boolean {
  return text.endsWith(IN_PROGRESS_MARK);
}

/** Text with markdown worth rendering: emphasis, code, headings, lists, quotes, tables, links. */
const MARKDOWN = /\*\*|__|`|^#{1,6} |^\s*[-*+] |^\s*\d+\. |^> |^\|.*\|\s*$|\]\(/m;
