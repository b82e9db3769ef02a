/**
 * Each person's files are theirs (real app over the test platform, the fake
 * model, the built-in tools): on a bot anyone may use, a second person's
 * `files_read` of the owner's file finds nothing; a group's files are the
 * group's; memory follows the same rule; a folder the owner shares is
 * readable by everyone.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatInfo, PromptAction, Sender } from '../../../src/channels/types.js';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../../fakes/llm/server.js';
import { startAppRig, type AppRig } from '../../support/app-rig.js';
import { testDm, testGroup } from '../../support/test-channel.js';

const OWNER: Sender = { id: 'owner', name: 'Olga' };
const STRANGER: Sender = { id: 'stranger', name: 'Sam' };
const ADA: Sender = { id: 'ada', name: 'Ada' };
const BOB: Sender = { id: 'bob', name: 'Bob' };

let rig: AppRig | undefined;
const folders: string[] = [];
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/**
 * A model that does what it is told in so many words: "write PATH: TEXT",
 * "read PATH", "remember TEXT", "recall WORDS"; after a tool result it
 * reports the result.
 */
function obedientModel(request: FakeLlmRequest): FakeLlmEntry {
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return textReply(`result: ${String(last.content)}`);
  const said = String(last.content);
  const write = /write (\S+): (.+)$/.exec(said);
  if (write) return toolCallReply([{ name: 'files_write', arguments: { path: write[1], content: write[2] } }]);
  const read = /read (\S+)$/.exec(said);
  if (read) return toolCallReply([{ name: 'files_read', arguments: { path: read[1] } }]);
  const remember = /remember (.+)$/.exec(said);
  if (remember) return toolCallReply([{ name: 'memory_write', arguments: { text: remember[1] } }]);
  const recall = /recall (.+)$/.exec(said);
  if (recall) return toolCallReply([{ name: 'memory_search', arguments: { query: recall[1] } }]);
  return textReply('say what to do');
}

/** Sends `text` as `sender` in `chat` (addressing the bot), answers an approval prompt with `press` when given, and returns the answer. */
async function say(chat: ChatInfo, sender: Sender, text: string, press?: PromptAction): Promise<string> {
  const platform = rig!.platform;
  const before = platform.messagesIn(chat).length;
  const prompts = platform.approvalsIn(chat).length;
  platform.channel.userMessage({ chat, sender, text, mentionsBot: true });
  if (press) {
    const prompt = await platform.waitFor(() => platform.approvalsIn(chat)[prompts], 5_000, `an approval prompt for "${text}"`);
    platform.channel.press(prompt.prompt.id, press, sender);
  }
  const answer = await platform.waitFor(() => platform.messagesIn(chat)[before], 5_000, `the answer to "${text}"`);
  await rig!.app.runtime.idle();
  return answer.text;
}

function tempFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'pincer-shared-'));
  folders.push(folder);
  return folder;
}

describe('workspaces on a bot anyone may use', () => {
  it("a second person cannot read the owner's notes/todo.txt, and their own file of that name is theirs", async () => {
    rig = await startAppRig({ responder: obedientModel });
    const ownerDm = testDm(OWNER.id);
    const strangerDm = testDm(STRANGER.id);
    expect(await say(ownerDm, OWNER, 'write notes/todo.txt: buy milk', 'approve')).toContain('Wrote 8 bytes to notes/todo.txt');

    const peek = await say(strangerDm, STRANGER, 'read notes/todo.txt');
    expect(peek).toContain('"notes/todo.txt" does not exist in the workspace.');
    expect(peek).not.toContain('buy milk');

    expect(await say(strangerDm, STRANGER, 'write notes/todo.txt: learn to knit', 'approve')).toContain('Wrote 13 bytes to notes/todo.txt');
    expect(await say(strangerDm, STRANGER, 'read notes/todo.txt')).toContain('learn to knit');
    const own = await say(ownerDm, OWNER, 'read notes/todo.txt');
    expect(own).toContain('buy milk');
    expect(own).not.toContain('learn to knit');
  });

  it("a group's files are the group's: every member reads them, no DM and no other group does", async () => {
    rig = await startAppRig({ responder: obedientModel });
    const team = testGroup('g1', 'Team');
    const other = testGroup('g2', 'Other');
    // Writing asks first, which only a DM can; "Always allow" there lets Ada write in groups.
    await say(testDm(ADA.id), ADA, 'write hello.txt: hi', 'always');
    expect(await say(team, ADA, 'write plan.txt: ship on friday')).toContain('Wrote 14 bytes to plan.txt');

    expect(await say(team, BOB, 'read plan.txt')).toContain('ship on friday');
    expect(await say(testDm(ADA.id), ADA, 'read plan.txt')).toContain('"plan.txt" does not exist in the workspace.');
    expect(await say(other, ADA, 'read plan.txt')).toContain('"plan.txt" does not exist in the workspace.');
    expect(await say(team, BOB, 'read hello.txt')).toContain('"hello.txt" does not exist in the workspace.');
  });

  it("memory notes are the person's own in DMs and the group's in a group", async () => {
    rig = await startAppRig({ responder: obedientModel });
    const team = testGroup('g1', 'Team');
    await say(testDm(ADA.id), ADA, 'remember my locker code is 4711');
    await say(team, ADA, 'remember the team meets on tuesdays');

    expect(await say(testDm(BOB.id), BOB, 'recall locker code')).toContain('No notes match');
    expect(await say(team, BOB, 'recall locker code')).toContain('No notes match');
    expect(await say(team, BOB, 'recall team meets')).toContain('the team meets on tuesdays');
    const own = await say(testDm(ADA.id), ADA, 'recall locker team');
    expect(own).toContain('my locker code is 4711');
    expect(own).not.toContain('tuesdays');
  });

  it("an answer citing a line of the person's own file is checked against their workspace, and delivered as it is", async () => {
    rig = await startAppRig({
      responder: (request) => {
        const last = request.messages.at(-1)!;
        if (String(last.content).startsWith('Before this answer goes to the user')) return textReply('corrected');
        if (last.role === 'tool' && String(last.content).includes('buy milk')) return textReply('It is on notes/todo.txt:1.');
        return obedientModel(request);
      },
    });
    await say(testDm(OWNER.id), OWNER, 'write notes/todo.txt: buy milk', 'approve');
    expect(await say(testDm(OWNER.id), OWNER, 'read notes/todo.txt')).toBe('It is on notes/todo.txt:1.');
  });

  it('a folder the owner shares is readable by everyone, and read-only', async () => {
    const handbook = tempFolder();
    writeFileSync(join(handbook, 'rules.txt'), 'be kind');
    rig = await startAppRig({ responder: obedientModel, config: { tools: { files: { shared: [{ name: 'handbook', path: handbook }] } } } });
    expect(await say(testDm(OWNER.id), OWNER, 'read shared/handbook/rules.txt')).toContain('be kind');
    expect(await say(testDm(STRANGER.id), STRANGER, 'read shared/handbook/rules.txt')).toContain('be kind');
    expect(await say(testGroup('g1'), STRANGER, 'read shared/handbook/rules.txt')).toContain('be kind');
    // Refused before anyone is asked: no prompt to answer.
    expect(await say(testDm(STRANGER.id), STRANGER, 'write shared/handbook/rules.txt: be mean')).toContain('which is read-only');
    expect(await say(testDm(OWNER.id), OWNER, 'read shared/handbook/rules.txt')).toContain('be kind');
  });
});
