/**
 * The scenario driver over the terminal channel: the real TerminalChannel
 * reads typed lines from a stream and writes to a screen, and this driver is
 * the person at the keyboard. It types messages, `/commands` and the answer
 * letters (`y`, `n`, `a`, `c`, `s`, `t`), and reads the screen the way a
 * person does: bot messages are the `pincer: ` blocks with their streamed
 * tails, prompts end with their question line, outcomes start with their mark,
 * and anything else printed is a notice.
 *
 * The output is not a TTY (no prompt, no cursor movement), so the screen is a
 * plain transcript. It is read per write: the adapter writes a message start,
 * each extending tail, the newline that closes a message, and each block in
 * one write, and a custom stream sees each write as it happens.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { ACTION_VIEWS } from '../../../src/channels/approval-payload.js';
import { TerminalChannel } from '../../../src/channels/terminal/adapter.js';
import type { ChannelDeps, PromptAction } from '../../../src/channels/types.js';
import type { BotMessage, ChannelSetup, ScenarioChat, ScenarioDriver, ScenarioUser, SeenApproval } from '../driver.js';

const BOT_PREFIX = 'pincer: ';
/** What a message printed again after other output starts with: the rest of an edited message. */
const CONTINUED = '…';
/** The last line of a prompt: the question and its lettered choices. */
const QUESTION = /^(?:Approve\?|Your choice\?) (.*):$/;
/** The first characters of an outcome line (see approvalOutcomeLine). */
const OUTCOME_MARKS = ['✅', '❌', '▶️', '⏹️', '↪️', '🚫', '⌛'];
/** The word of each choice in the question, by its letter's action. */
const CHOICE_WORDS: Record<string, PromptAction> = {
  '[y]es': 'approve',
  '[n]o': 'deny',
  '[a]lways': 'always',
  '[c]ontinue': 'continue',
  '[s]top': 'stop',
  '[t]ry another way': 'redirect',
};

interface ShownPrompt {
  messageId: string;
  body: string;
  actions: PromptAction[];
  outcome?: string;
}

/** The screen as a person reads it, rebuilt from the writes to it. */
class ScreenReader {
  readonly messages: BotMessage[] = [];
  readonly prompts: ShownPrompt[] = [];
  readonly notices: string[] = [];
  /** Everything written, for failure messages. */
  transcript = '';
  private open: BotMessage | undefined;
  private ids = 0;

  /** A stream the channel writes to. */
  stream(): Writable {
    return new Writable({
      write: (chunk: Buffer | string, _encoding, done) => {
        this.read(chunk.toString());
        done();
      },
    });
  }

  /** Marks every prompt still waiting as gone (its process ended). */
  abandonOpenPrompts(): void {
    for (const prompt of this.prompts) prompt.outcome ??= '(no longer answerable)';
  }

  private read(chunk: string): void {
    this.transcript += chunk;
    if (this.open) {
      if (chunk === '\n') this.open = undefined;
      else this.open.text += chunk;
      return;
    }
    if (chunk.startsWith(BOT_PREFIX)) {
      const text = chunk.slice(BOT_PREFIX.length);
      const last = this.messages.at(-1);
      if (text.startsWith(CONTINUED) && last) {
        last.text += text.slice(CONTINUED.length);
        this.open = last;
      } else {
        this.open = { messageId: `m${++this.ids}`, text };
        this.messages.push(this.open);
      }
      return;
    }
    this.readBlock(chunk.replace(/\n$/, ''));
  }

  private readBlock(block: string): void {
    const lines = block.split('\n');
    const question = QUESTION.exec(lines.at(-1) ?? '');
    if (question) {
      const actions = question[1]!.split(' / ').map((word) => CHOICE_WORDS[word]).filter((action): action is PromptAction => Boolean(action));
      this.prompts.push({ messageId: `p${++this.ids}`, body: lines.slice(0, -1).join('\n'), actions });
      return;
    }
    if (OUTCOME_MARKS.some((mark) => block.startsWith(mark))) {
      // A terminal answers its prompts in the order they were asked, and the scenarios have one open at a time.
      const prompt = this.prompts.find((p) => p.outcome === undefined);
      if (prompt) prompt.outcome = block;
      return;
    }
    this.notices.push(block);
  }
}

/**
 * One person, the owner, in one DM: `users` names them three times so that the
 * suite's roles (owner, alice, bob) all resolve to the person at the keyboard.
 */
export function createTerminalDriver(): ScenarioDriver {
  const person: ScenarioUser = { id: 'owner', name: 'Ada' };
  const users: readonly ScenarioUser[] = [person, person, person];
  const dm: ScenarioChat = { kind: 'dm', id: 'local' };
  const screen = new ScreenReader();
  let keyboard: PassThrough | undefined;
  let latest: TerminalChannel | undefined;
  /** Folders of files attached with /attach, removed at teardown. */
  const attachFolders: string[] = [];

  const type = (line: string): void => {
    if (!keyboard) throw new Error('terminal driver: no channel yet');
    if (line.includes('\n')) throw new Error('terminal driver: a typed line cannot hold a newline');
    keyboard.write(`${line}\n`);
  };
  const local = (chat: ScenarioChat): void => {
    if (chat.id !== dm.id) throw new Error(`terminal driver: the terminal has one chat, not ${chat.id}`);
  };

  return {
    name: 'terminal',
    users,
    noAllowlists: 'the terminal has one local user, the owner',
    noGroups: 'the terminal is one direct conversation',
    singleUser: 'the terminal has one person at the keyboard',
    noLatePresses: 'a typed answer goes to the prompt waiting at the keyboard; one already answered, cancelled or shown before a restart takes none',
    setup: async () => undefined,
    teardown: async () => {
      await latest?.stop();
      for (const folder of attachFolders.splice(0)) rmSync(folder, { recursive: true, force: true });
    },
    createChannel(deps: ChannelDeps, _setup?: ChannelSetup) {
      // A prompt of the previous process takes no more answers: nothing reads the keyboard for it.
      screen.abandonOpenPrompts();
      keyboard = new PassThrough();
      latest = new TerminalChannel({ input: keyboard, output: screen.stream(), userName: person.name, userId: person.id, color: false }, deps);
      return latest;
    },
    dm: () => dm,
    group: () => {
      throw new Error('terminal driver: the terminal has no group chats');
    },
    sendMessage: async (chat, _user, text) => {
      local(chat);
      type(text);
    },
    sendFile: async (chat, _user, text, file) => {
      local(chat);
      // The file is on this machine: written to a folder of its own, then attached by path.
      const folder = mkdtempSync(join(tmpdir(), 'pincer-attach-'));
      attachFolders.push(folder);
      const path = join(folder, file.name);
      writeFileSync(path, file.bytes);
      type(`/attach "${path}" ${text}`);
    },
    sendCommand: async (chat, _user, name, args = '') => {
      local(chat);
      type(args ? `/${name} ${args}` : `/${name}`);
    },
    pressApproval: async (chat, _user, approval: SeenApproval, action: PromptAction) => {
      local(chat);
      const waiting = screen.prompts.find((p) => p.outcome === undefined);
      if (waiting?.messageId !== approval.messageId) throw new Error(`terminal driver: prompt ${approval.messageId} is not waiting for an answer`);
      type(ACTION_VIEWS[action].key);
    },
    messages: (chat) => (chat.id === dm.id ? screen.messages.map((m) => ({ ...m })) : []),
    approvals: (chat) =>
      chat.id === dm.id
        ? screen.prompts.map((p) => ({
            messageId: p.messageId,
            text: p.outcome === undefined ? p.body : `${p.body}\n${p.outcome}`,
            actions: p.outcome === undefined ? [...p.actions] : [],
          }))
        : [],
    privateNotices: () => [...screen.notices],
  };
}
