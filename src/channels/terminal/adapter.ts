/**
 * The terminal channel: a local REPL that needs no token. The person at the
 * keyboard is the owner in one DM with the bot (access.ts); typed lines become
 * messages, `/name args` lines become commands, and `y` / `n` / `a` answer a
 * pending approval prompt (inbound.ts); what the bot says is printed by
 * outbound.ts on a {@link Screen} shared with the line being typed.
 */
import { createInterface, type Interface } from 'node:readline';
import { ACTION_VIEWS } from '../approval-payload.js';
import { EventQueue } from '../event-queue.js';
import type {
  PromptAction,
  AttachmentMeta,
  FetchLimits,
  ApprovalOutcome,
  ApprovalPrompt,
  Channel,
  ChannelCapabilities,
  ChannelDeps,
  ChatAddress,
  ChatInfo,
  InboundEvent,
  OutboundFile,
  Reply,
  Sender,
  SentMessage,
} from '../types.js';
import { ATTACH_COMMAND, localAttachment, parseAttachArgs, readLocalAttachment } from './attach.js';
import { assertLocal, isLocalUser, localUser, TERMINAL_CHAT } from './access.js';
import { interpretLine, offeredKeys, promptQuestion } from './inbound.js';
import { resolveTerminalOptions, type ResolvedTerminalOptions, type TerminalChannelOptions } from './options.js';
import { TerminalOutbound } from './outbound.js';
import { terminalStyle, type TerminalStyle } from './render.js';
import { Screen } from './screen.js';

export { TERMINAL_CHAT } from './access.js';
export type { TerminalChannelOptions } from './options.js';

/** What a terminal can do: long messages, instant edits, no typing indicator to refresh. */
export const TERMINAL_CAPABILITIES = {
  maxMessageLength: 100_000,
  minEditIntervalMs: 0,
  typingIntervalMs: 0,
  localOperator: true,
  answersInPlace: true,
  editsMayRepeat: true,
} as const satisfies ChannelCapabilities;

const PROMPT = '> ';
/** A second Ctrl+C within this time quits instead of interrupting. */
const DOUBLE_INTERRUPT_MS = 2_000;

/**
 * A {@link Channel} over a pair of streams, for running the bot from a shell.
 *
 * @example
 * const terminal = new TerminalChannel({ input: process.stdin, output: process.stdout, userName: 'ada' }, deps);
 * await terminal.start();
 * for await (const event of terminal.events()) ...
 */
export class TerminalChannel implements Channel {
  readonly name = 'terminal';
  readonly capabilities: ChannelCapabilities = TERMINAL_CAPABILITIES;
  readonly ownCommands = ['/attach PATH [message]: sends a file from this machine with the message (or with your next one)'];

  private readonly queue = new EventQueue<InboundEvent>();
  private readonly options: ResolvedTerminalOptions;
  private readonly sender: Sender;
  private readonly screen: Screen;
  private readonly style: TerminalStyle;
  private readonly outbound: TerminalOutbound;
  /** Shown and not yet answered at the keyboard, oldest first: the next answer goes to the first. */
  private awaitingAnswer: ApprovalPrompt[] = [];
  private readline?: Interface;
  private nextInboundId = 1;
  private lastInterruptAt = 0;
  /** Files attached with `/attach`, waiting for the next message. */
  private readonly attached: AttachmentMeta[] = [];
  /** Set by {@link stop}: the input closing then is not the person quitting. */
  private stopping = false;

  constructor(
    options: TerminalChannelOptions,
    private readonly deps: ChannelDeps,
  ) {
    this.options = resolveTerminalOptions(options);
    this.sender = localUser(this.options);
    this.screen = new Screen(options.output, this.options.tty);
    this.style = terminalStyle(this.options.color);
    this.outbound = new TerminalOutbound(this.screen, this.style, this.options.botName);
  }

  /** Starts reading lines; the prompt appears on a TTY. */
  async start(): Promise<void> {
    if (this.readline || this.queue.isClosed) return;
    const { input, output } = this.options;
    const readline = createInterface({ input, output, terminal: this.screen.tty, prompt: PROMPT, historySize: 200 });
    this.readline = readline;
    readline.on('line', (line) => this.onLine(line));
    readline.on('SIGINT', () => this.onInterrupt());
    readline.on('close', () => this.onClose());
    if (this.screen.tty) this.attachPrompt(readline, input);
    this.deps.log.debug('terminal channel started');
  }

  /** Closes the line editor; the event stream ends. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.readline) this.readline.close();
    else this.onClose();
  }

  /** Typed lines and Ctrl+C, until the input ends (Ctrl+D) or the channel stops. */
  events(): AsyncIterable<InboundEvent> {
    return this.queue;
  }

  /** Prints a bot message; it stays open for streaming edits (see outbound.ts). */
  async send(chat: ChatAddress, text: string): Promise<SentMessage> {
    assertLocal(chat);
    return this.outbound.send(text);
  }

  /** Nothing is uploaded at a terminal: where the file is, and its size, are printed instead (with its caption). */
  async sendFile(chat: ChatAddress, file: OutboundFile): Promise<SentMessage> {
    assertLocal(chat);
    const where = file.localPath ?? file.name;
    const line = `📎 ${file.name} (${sizeText(file.bytes.byteLength)}): ${where}`;
    return this.outbound.send(file.caption ? `${file.caption}\n${line}` : line);
  }

  /** Prints the new tail of an extended message; otherwise redraws it in place on a TTY, or prints it again. */
  async edit(message: SentMessage, text: string): Promise<SentMessage> {
    return this.outbound.edit(message, text);
  }

  /** Shows `… thinking` in place of the prompt, on a TTY only. */
  async typing(chat: ChatAddress): Promise<void> {
    assertLocal(chat);
    this.outbound.typing();
  }

  /** Prints the prompt and asks for a choice (`Approve? [y]es / [n]o / [a]lways`); the next answer typed goes to it. */
  async sendApproval(chat: ChatAddress, prompt: ApprovalPrompt): Promise<SentMessage> {
    assertLocal(chat);
    this.awaitingAnswer.push(prompt);
    this.updatePrompt();
    return this.outbound.approval(prompt);
  }

  /** Prints how the approval ended; the input prompt returns to `> `. */
  async resolveApproval(_message: SentMessage, prompt: ApprovalPrompt, outcome: ApprovalOutcome): Promise<void> {
    this.awaitingAnswer = this.awaitingAnswer.filter((p) => p.id !== prompt.id);
    this.updatePrompt();
    this.outbound.outcome(outcome);
  }

  /**
   * Prints a line of the program's own (where its log goes, a warning) dimmed
   * above the prompt, so that it never lands in the line being typed.
   */
  notice(text: string): void {
    this.outbound.notice(text);
  }

  /** The person at the keyboard controls the process, so they are an admin here. */
  async isAdmin(_chat: ChatInfo, userId: string): Promise<boolean> {
    return isLocalUser(this.sender, userId);
  }

  private onLine(line: string): void {
    const pending = this.awaitingAnswer[0];
    const typed = interpretLine(line, pending);
    switch (typed.kind) {
      case 'message':
        this.sendMessage(typed.text);
        break;
      case 'command':
        if (typed.name === ATTACH_COMMAND) this.attach(typed.args);
        else this.push({ type: 'command', name: typed.name, args: typed.args, messageId: this.inboundId() });
        break;
      case 'answer':
        this.answer(pending!, typed.action);
        break;
      case 'retry':
        this.outbound.notice(`"${typed.text}" is not an answer: type ${offeredKeys(pending!.actions)} (or a sentence to tell me something else).`);
        break;
      case 'not-offered':
        this.outbound.notice(`"${ACTION_VIEWS[typed.action].label}" is not offered for this tool: answer ${offeredKeys(pending!.actions)}.`);
        break;
      case 'empty':
        break;
    }
    this.screen.showPrompt();
  }

  /** A typed message, with the files attached since the last one. */
  private sendMessage(text: string): void {
    const attachments = this.attached.splice(0);
    this.push({ type: 'message', messageId: this.inboundId(), text, mentionsBot: true, replyToBot: false, attachments });
  }

  /** `/attach PATH [message]`: the file goes with the message, or with the next one typed (attach.ts). */
  private attach(args: string): void {
    const parsed = parseAttachArgs(args);
    if (!parsed) return this.outbound.notice('Usage: /attach PATH [message]. The file goes with the message, or with your next one.');
    const attachment = localAttachment(parsed.path);
    if (typeof attachment === 'string') return this.outbound.notice(attachment);
    this.attached.push(attachment);
    if (parsed.text) this.sendMessage(parsed.text);
    else this.outbound.notice(`${attachment.name} will go with your next message.`);
  }

  /** Reads a file attached with `/attach`. */
  fetchAttachment(attachment: AttachmentMeta, limits: FetchLimits): Promise<Uint8Array> {
    return readLocalAttachment(attachment, limits);
  }

  /** Sends the answer once; the prompt stops taking answers even before the agent resolves it. */
  private answer(prompt: ApprovalPrompt, action: PromptAction): void {
    this.awaitingAnswer = this.awaitingAnswer.filter((p) => p !== prompt);
    this.updatePrompt();
    this.push({ type: 'approval', approvalId: prompt.id, action, respond: async (reply: Reply) => this.notice(reply.text) });
  }

  /** Ctrl+C interrupts the running turn; twice in a row quits (see {@link onClose}). */
  private onInterrupt(): void {
    const now = Date.now();
    if (now - this.lastInterruptAt < DOUBLE_INTERRUPT_MS) {
      this.readline?.close();
      return;
    }
    this.lastInterruptAt = now;
    this.discardTypedLine();
    this.push({ type: 'command', name: 'stop', args: '' });
    this.screen.printBlock(this.style.dim('^C  stopping (press Ctrl+C again to quit)'));
  }

  private onClose(): void {
    const quit = !this.stopping && !this.queue.isClosed;
    // A closed line editor throws on use; dropping it keeps late output (a final reply) working.
    this.readline = undefined;
    this.screen.close();
    this.queue.close();
    if (quit) this.options.onQuit();
  }

  private push(event: DistributiveOmit<InboundEvent, 'chat' | 'sender' | 'receivedAt'>): void {
    this.queue.push({ ...event, chat: { ...TERMINAL_CHAT }, sender: { ...this.sender }, receivedAt: Date.now() });
  }

  /** Hooks the screen to the line editor so output and typing do not garble each other. */
  private attachPrompt(readline: Interface, input: NodeJS.ReadableStream): void {
    this.screen.attachPrompt({ redraw: () => readline.prompt(true), isTyping: () => readline.line.length > 0 });
    // Prepended so the screen makes room before readline echoes the key.
    const beforeKey = () => this.screen.beforeKey();
    input.prependListener('keypress', beforeKey);
    readline.once('close', () => input.removeListener('keypress', beforeKey));
    this.screen.printBlock(this.style.dim('pincer terminal: type a message, /help for commands, Ctrl+D to quit.'));
  }

  private updatePrompt(): void {
    const pending = this.awaitingAnswer[0];
    this.readline?.setPrompt(pending ? this.style.bold(promptQuestion(pending.actions)) : PROMPT);
  }

  private discardTypedLine(): void {
    if (!this.screen.tty || !this.readline) return;
    this.readline.write(null, { ctrl: true, name: 'e' });
    this.readline.write(null, { ctrl: true, name: 'u' });
  }

  private inboundId(): string {
    return `in${this.nextInboundId++}`;
  }
}

/** `Omit` applied to each member of a union, so the event type stays discriminated. */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A size for people: `812 bytes`, `14.2 KB`, `3.1 MB`. */
function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
