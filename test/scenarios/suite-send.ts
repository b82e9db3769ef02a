/**
 * `files_send` on every channel that uploads files: the real app asks first,
 * then the file reaches the fake platform through the real client library
 * (as a photo when it is an image, else as a document), once; a refusal of
 * the platform and a rate limit are handled. Called from suite.ts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { workspaceDirOf } from '../../src/tools/builtin/index.js';
import { workspaceFolder } from '../../src/tools/builtin/lib/workspaces.js';
import { hang, textReply, toolCallReply, type FakeLlmRequest } from '../fakes/llm/server.js';
import { minimalPdf } from '../support/pdf.js';
import { sha256Of, TINY_PNG } from '../support/sent-files.js';
import { lastUserText } from './brain.js';
import type { ScenarioChat, ScenarioDriver, ScenarioUser, SentFile } from './driver.js';
import { startHarness, waitFor, waitForApproval, waitForMessage, type Harness } from './harness.js';

/**
 * `send PATH [caption]`: the model calls files_send; `send again PATH`: it
 * calls it once more after the first result, as a model that lost track might;
 * anything else goes to the brain.
 */
function sendingModel(h: Harness) {
  return (request: FakeLlmRequest) => {
    const last = request.messages.at(-1);
    const text = lastUserText(request.messages).replace(/^\[[^\]]*\]\s*/, '');
    const command = /^send (again )?(\S+)(?: (.+))?$/.exec(text);
    if (!command) return h.brain.respond(request);
    const [, again, path, caption] = command;
    const call = [{ name: 'files_send', arguments: { path, ...(caption ? { caption } : {}) } }];
    // The results of this turn's calls (a notice of the engine may follow them).
    const asked = request.messages.findLastIndex((message) => message.role === 'user' && String(message.content).includes(text));
    const results = request.messages.slice(asked + 1).filter((message) => message.role === 'tool');
    if (results.length < (again ? 2 : 1)) return toolCallReply(call);
    return last?.role === 'tool' ? h.brain.respond(request) : textReply(`result: ${results.map((result) => String(result.content)).join(' | ')}`);
  };
}

/** Defines the files_send scenarios for the channel `driver` drives (skipped on one that uploads nothing). */
export function defineSendScenarios(driver: ScenarioDriver): void {
  const alice = driver.users[1]!;
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  }, 30_000);

  /** Files sent into each chat by earlier scenarios (the fake platform outlives them), left out of {@link files}. */
  const earlier = new Map<string, number>();
  const start = async () => {
    h = await startHarness(driver);
    h.llm.setResponder(sendingModel(h));
    const dm = h.driver.dm(alice);
    earlier.set(dm.id, h.driver.sentFiles?.(dm).length ?? 0);
    return h;
  };
  /** Puts a file into `user`'s own workspace (their DM's). */
  const put = (user: ScenarioUser, path: string, bytes: Buffer) => {
    const target = join(workspaceFolder(workspaceDirOf(h.config), { kind: 'person', userId: `${driver.name}:${user.id}` }), path);
    mkdirSync(join(target, '..'), { recursive: true });
    writeFileSync(target, bytes);
  };
  const files = (chat: ScenarioChat): SentFile[] => h.driver.sentFiles!(chat).slice(earlier.get(chat.id) ?? 0);
  /** Asks for `path` to be sent and answers the prompt with `action`; the prompt's text. */
  const askAndAnswer = async (chat: ScenarioChat, text: string, action: 'approve' | 'deny', index = 0) => {
    await h.driver.sendMessage(chat, alice, text);
    const prompt = await waitForApproval(h, chat, index);
    await h.driver.pressApproval(chat, alice, prompt, action);
    return prompt.text;
  };
  const uploads = driver.sentFiles ? it : it.skip;

  describe(`scenarios on ${driver.name}: sending files`, () => {
    uploads('an image arrives as a photo once approved; the prompt names it and its size', async () => {
      await start();
      const dm = h.driver.dm(alice);
      put(alice, 'out/chart.png', TINY_PNG);
      const prompt = await askAndAnswer(dm, 'send out/chart.png the chart', 'approve');
      expect(prompt).toContain(`Send chart.png (${TINY_PNG.length} bytes) to this conversation`);
      await waitForMessage(h, dm, 'Sent out/chart.png (70 bytes) to the conversation as a photo');
      expect(files(dm)).toEqual([{ name: 'chart.png', size: TINY_PNG.length, sha256: sha256Of(TINY_PNG), caption: 'the chart', shownAs: 'photo' }]);
    }, 30_000);

    uploads('an answer that embeds an image of the workspace sends it after the text, without asking; other addresses stay text', async () => {
      await start();
      const dm = h.driver.dm(alice);
      put(alice, 'out/chart.png', TINY_PNG);
      put(alice, 'out/notes.pdf', minimalPdf(['not a picture']));
      const answer = 'Here: ![chart](out/chart.png) ![again](./out/chart.png) ![web](https://example.com/a.png) ![doc](out/notes.pdf) ![escape](../../x.png)';
      h.llm.setResponder((request) => (lastUserText(request.messages).includes('show me the chart') ? textReply(answer) : h.brain.respond(request)));
      await h.driver.sendMessage(dm, alice, 'show me the chart');
      await waitForMessage(h, dm, /^Here: /);
      await waitFor(() => files(dm).length > 0, () => 'the picture');
      await h.driver.sendMessage(dm, alice, 'marker after the picture');
      await waitForMessage(h, dm, 'echo: marker after the picture');
      expect(h.driver.approvals(dm)).toHaveLength(0);
      expect(files(dm)).toEqual([{ name: 'chart.png', size: TINY_PNG.length, sha256: sha256Of(TINY_PNG), shownAs: 'photo' }]);
    }, 30_000);

    uploads('a PDF and a text file arrive as documents; a denied one is not sent', async () => {
      await start();
      const dm = h.driver.dm(alice);
      const pdf = minimalPdf(['Quarterly report']);
      put(alice, 'report.pdf', pdf);
      put(alice, 'notes.txt', Buffer.from('plain notes\n'));
      await askAndAnswer(dm, 'send report.pdf', 'approve');
      await waitForMessage(h, dm, 'Sent report.pdf');
      await askAndAnswer(dm, 'send notes.txt', 'deny', 1);
      await waitForMessage(h, dm, 'Denied by the user');
      await askAndAnswer(dm, 'send notes.txt for you', 'approve', 2);
      await waitForMessage(h, dm, 'Sent notes.txt');
      expect(files(dm).map(({ name, size, sha256, shownAs }) => ({ name, size, sha256, shownAs }))).toEqual([
        { name: 'report.pdf', size: pdf.length, sha256: sha256Of(pdf), shownAs: 'document' },
        { name: 'notes.txt', size: 12, sha256: sha256Of(Buffer.from('plain notes\n')), shownAs: 'document' },
      ]);
    }, 30_000);

    uploads('the same file asked for again in the same turn is sent once', async () => {
      await start();
      const dm = h.driver.dm(alice);
      put(alice, 'out/chart.png', TINY_PNG);
      await h.app.services.permissions.set(`${driver.name}:${alice.id}`, 'files_send', 'alwaysAllow');
      await h.driver.sendMessage(dm, alice, 'send again out/chart.png');
      await waitForMessage(h, dm, 'it was not sent again');
      expect(files(dm)).toHaveLength(1);
    }, 30_000);

    uploads('a turn resumed after a restart does not send the file it had sent again', async () => {
      await start();
      const dm = h.driver.dm(alice);
      put(alice, 'out/chart.png', TINY_PNG);
      await h.app.services.permissions.set(`${driver.name}:${alice.id}`, 'files_send', 'alwaysAllow');
      let restarted = false;
      // Before the restart the model sends the file, then thinks until the bot stops; after it, it sends the file again.
      h.llm.setResponder((request) => {
        const results = request.messages.filter((message) => message.role === 'tool');
        if (results.length < (restarted ? 2 : 1)) return toolCallReply([{ name: 'files_send', arguments: { path: 'out/chart.png' } }]);
        return restarted ? textReply(`result: ${String(results.at(-1)!.content)}`) : hang();
      });
      await h.driver.sendMessage(dm, alice, 'the chart please');
      await waitFor(() => files(dm).length === 1 && h.llm.requests.length >= 2, 'the file sent and the model thinking');
      restarted = true;
      await h.restart();
      await waitForMessage(h, dm, 'it was not sent again');
      expect(files(dm)).toHaveLength(1);
    }, 30_000);

    uploads('a rate limit is waited out and the file sent once; a refusal (413) is told to the person', async () => {
      await start();
      const dm = h.driver.dm(alice);
      put(alice, 'out/chart.png', TINY_PNG);
      put(alice, 'report.pdf', minimalPdf(['Quarterly report']));
      await h.app.services.permissions.set(`${driver.name}:${alice.id}`, 'files_send', 'alwaysAllow');
      h.driver.failNextUpload!('rate-limited', 'photo');
      await h.driver.sendMessage(dm, alice, 'send out/chart.png');
      await waitForMessage(h, dm, 'Sent out/chart.png (70 bytes) to the conversation as a photo');
      expect(files(dm).map((file) => file.name)).toEqual(['chart.png']);
      if (driver.name === 'slack') return; // Slack takes 1 GB, far above attachments.maxBytes: no 413 to meet.
      h.driver.failNextUpload!('too-large', 'document');
      await h.driver.sendMessage(dm, alice, 'send report.pdf');
      const told = await waitForMessage(h, dm, /refused report\.pdf/);
      expect(told.text).toMatch(/413|too large/i);
      expect(files(dm).map((file) => file.name)).toEqual(['chart.png']);
    }, 30_000);

    const inGroups = driver.sentFiles && !driver.noGroups ? it : it.skip;
    inGroups('in a group, the call is refused with the reason: no prompt, nothing sent', async () => {
      await start();
      const room = h.driver.group();
      await h.driver.sendMessage(room, alice, 'send out/chart.png', { mention: true });
      await waitForMessage(h, room, '"files_send" needs the user\'s approval, which is only possible in a direct message with the bot');
      expect(h.driver.approvals(room)).toEqual([]);
      expect(files(room)).toEqual([]);
    }, 30_000);

    inGroups('in a group, for a person who always allows it, the group\'s own file is sent into the group', async () => {
      await start();
      const room = h.driver.group();
      const folder = workspaceFolder(workspaceDirOf(h.config), { kind: 'chat', channel: driver.name, chatId: room.id });
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'minutes.txt'), 'the minutes\n');
      await h.app.services.permissions.set(`${driver.name}:${alice.id}`, 'files_send', 'alwaysAllow');
      await h.driver.sendMessage(room, alice, 'send minutes.txt', { mention: true });
      await waitForMessage(h, room, 'Sent minutes.txt');
      expect(h.driver.approvals(room)).toEqual([]);
      expect(h.driver.sentFiles!(room).map(({ name, shownAs }) => ({ name, shownAs }))).toEqual([{ name: 'minutes.txt', shownAs: 'document' }]);
    }, 30_000);

    uploads('a file outside the workspace is refused before anyone is asked', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'send ../../secret.txt');
      await waitForMessage(h, dm, 'leaves the workspace');
      expect(h.driver.approvals(dm)).toEqual([]);
      expect(files(dm)).toEqual([]);
    }, 30_000);
  });
}
