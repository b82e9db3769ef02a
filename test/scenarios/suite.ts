/**
 * The shared scenario suite: the same conversations on every channel, through
 * the channel's fake platform and the real platform library. Each scenario gets
 * a fresh app and store; the fake platform lives for the whole suite.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPEATED_FAILURE_NOTICE, roundsExhaustedMessage } from '../../src/engine/guards/notices.js';
import { NOT_AVAILABLE } from '../../src/channels/access.js';
import { STALE_BUTTON, threadKeyOf } from '../../src/channels/types.js';
import { minimalPdf } from '../support/pdf.js';
import { NO_SUCH_TOOL_ANSWER } from './brain.js';
import { defineImageScenarios } from './suite-images.js';
import { defineSendScenarios } from './suite-send.js';
import type { ScenarioChat, ScenarioDriver, ScenarioUser } from './driver.js';
import { startHarness, waitFor, waitForApproval, waitForMessage, waitForResolved, type Harness, type HarnessOptions } from './harness.js';
import { defineVoiceScenarios } from './suite-voice.js';

/** Defines the suite for one channel. */
export function defineScenarioSuite(createDriver: () => ScenarioDriver): void {
  const driver = createDriver();
  let h: Harness;
  const [owner, alice, bob] = driver.users as [typeof driver.users[0], typeof driver.users[0], typeof driver.users[0]];

  beforeAll(() => driver.setup(), 60_000);
  afterAll(() => driver.teardown(), 60_000);
  afterEach(async () => {
    await h?.close();
  }, 30_000);

  const start = async (overrides = {}, options: HarnessOptions = {}) => {
    h = await startHarness(driver, overrides, options);
    return h;
  };
  /** Whether any model request carried `text` (as the message answered or as group context). */
  const modelSaw = (text: string) => h.llm.requests.some((request) => request.messages.some((m) => String(m.content).includes(text)));
  /** What `user` saw in `chat`: the bot's messages there and the notices only they could see. */
  const seenBy = (user: ScenarioUser, chat: ScenarioChat) => [...h.driver.messages(chat).map((m) => m.text), ...h.driver.privateNotices(user)];
  /** The bot's messages in `chat` from the `from`-th on, as one text. */
  const shown = (chat: ScenarioChat, from = 0) => h.driver.messages(chat).slice(from).map((m) => m.text).join('\n');
  let markers = 0;
  /**
   * Writes a marker message in `chat` and waits for its answer. A thread handles its work in order
   * (a turn, an approved call resumed, a press's effect queued on the thread), so whatever the
   * events sent before the marker in this thread would have caused, a late duplicate included, has
   * happened by the time the marker is answered: no fixed wait for "nothing more".
   */
  const marker = async (chat: ScenarioChat, user: ScenarioUser = alice, options: { mention?: boolean } = {}) => {
    const text = `marker ${++markers}`;
    await h.driver.sendMessage(chat, user, text, options);
    await waitForMessage(h, chat, `echo: ${text}`);
  };
  /**
   * Whether an event of `chat` (or of a thread in it) reached the app. One channel hands its events
   * over in order, so once a later event of the same channel was answered, an earlier one that got
   * through the channel's access checks is listed here.
   */
  const reachedApp = (chat: ScenarioChat) => {
    const key = threadKeyOf({ channel: h.driver.name, chatId: chat.id });
    return h.inbound.some((thread) => thread === key || thread.startsWith(`${key}:`));
  };
  /**
   * A scenario that needs what the channel may not have (groups, a second
   * person, late presses): skipped with the driver's reason instead of faked.
   */
  const itNeeds = (reasons: Array<string | undefined>, title: string, body: () => Promise<void>, timeout?: number) => {
    const reason = reasons.find(Boolean);
    if (reason) it.skip(`${title} (skipped: ${reason})`, body);
    else it(title, body, timeout);
  };
  const groups = [driver.noGroups];
  const twoPeople = [driver.singleUser];
  const latePresses = [driver.noLatePresses];

  defineSendScenarios(driver);

  describe(`scenarios on ${driver.name}: conversations`, () => {
    it('answers a DM using a tool', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'calc 6*7');
      await waitForMessage(h, dm, '42');
      expect(h.llm.requests[0]!.tools?.map((t) => t.function.name)).toContain('calculator');
    });

    itNeeds(twoPeople, 'runs two threads at once: a slow tool in one does not delay the other', async () => {
      await start();
      const a = h.driver.dm(alice);
      const b = h.driver.dm(bob);
      await h.driver.sendMessage(a, alice, 'slow 5000');
      await waitFor(() => h.tools.slowStarted === 1, 'the slow tool to start');
      const sent = Date.now();
      await h.driver.sendMessage(b, bob, 'hello from bob');
      await waitForMessage(h, b, 'echo: hello from bob');
      expect(Date.now() - sent).toBeLessThan(3_000);
      expect(h.tools.slowFinished).toBe(0);
      await waitForMessage(h, a, 'waited 5000 ms', 15_000);
    });

    it('injects a message sent during a turn and answers once', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'slow 1500');
      await waitFor(() => h.tools.slowStarted === 1, 'the slow tool to start');
      await h.driver.sendMessage(dm, alice, 'and one more thing');
      await waitForMessage(h, dm, 'echo: and one more thing', 15_000);
      const userTexts = h.llm.requests.at(-1)!.messages.filter((m) => m.role === 'user').map((m) => String(m.content));
      expect(userTexts.filter((t) => t.includes('and one more thing'))).toHaveLength(1);
      expect(h.driver.messages(dm).filter((m) => m.text.includes('echo: and one more thing'))).toHaveLength(1);
    });

    it('/stop during a slow tool stops the turn and aborts the tool', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'slow 20000');
      await waitFor(() => h.tools.slowStarted === 1, 'the slow tool to start');
      await h.driver.sendCommand(dm, alice, 'stop');
      await waitFor(() => h.tools.slowAborted === 1, 'the tool to be aborted', 5_000);
      await waitFor(
        () => h.driver.messages(dm).some((m) => /stopped/i.test(m.text)) || h.driver.privateNotices(alice).some((t) => /stopped/i.test(t)),
        'a stopped confirmation',
      );
      await h.driver.sendMessage(dm, alice, 'are you there');
      await waitForMessage(h, dm, 'echo: are you there');
    });

    it('/stop during a model call ends the turn', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'hang');
      await waitFor(() => h.llm.served >= 1, 'the model call');
      await h.driver.sendCommand(dm, alice, 'stop');
      await waitFor(
        () => h.driver.messages(dm).some((m) => /stopped/i.test(m.text)) || h.driver.privateNotices(alice).some((t) => /stopped/i.test(t)),
        'a stopped confirmation',
      );
      await h.driver.sendMessage(dm, alice, 'still there');
      await waitForMessage(h, dm, 'echo: still there');
    });

    itNeeds(groups, 'keeps unaddressed group messages as context and uses them when addressed', async () => {
      await start();
      const group = h.driver.group();
      await h.driver.sendMessage(group, alice, 'the secret word is pineapple');
      await h.driver.sendMessage(group, bob, 'what was said?', { mention: true });
      await waitForMessage(h, group, 'echo: what was said?');
      // The group is one thread, handled in order: had the unaddressed message been answered, its
      // model request and reply would have come before these.
      expect(h.llm.requests).toHaveLength(1);
      expect(h.driver.messages(group)).toHaveLength(1);
      const sent = h.llm.requests[0]!.messages.map((m) => String(m.content)).join('\n');
      expect(sent).toContain('the secret word is pineapple');
      expect(sent).toContain(alice.name);
      expect(sent).toContain(`[${bob.name}] what was said?`);
    });

    it('ends a runaway tool loop with an honest message', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'loop');
      // The model calls a tool every time, even once no tool is offered: pincer has to end it.
      const rounds = h.config.agent.maxToolIterations;
      const honest = roundsExhaustedMessage(rounds);
      const answer = await waitForMessage(h, dm, honest, 15_000);
      expect(answer.text).toBe(honest);
      expect(h.llm.requests).toHaveLength(rounds);
      expect(h.llm.requests.slice(0, rounds - 1).every((r) => r.tools?.some((t) => t.function.name === 'calculator'))).toBe(true);
      expect(h.llm.requests.at(-1)!.tools ?? []).toHaveLength(0);
      const ran = h.llm.requests.at(-1)!.messages.filter((m) => m.role === 'tool');
      expect(ran).toHaveLength(rounds - 1);
    });

    it('long answers arrive whole: 20 paragraphs that reuse the same phrases, and a 60-row table', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'long');
      await waitFor(() => /key point of part 20\b/.test(shown(dm)) && /this matters\.?\s*$/.test(shown(dm)), 'the whole long answer');
      for (let part = 1; part <= 20; part++) expect(shown(dm)).toContain(`key point of part ${part} `);
      expect(shown(dm).match(/As noted before, this matters\./g)).toHaveLength(20 * 14);
      const before = h.driver.messages(dm).length;
      await h.driver.sendMessage(dm, alice, 'table');
      await waitFor(() => (shown(dm, before).match(/same item/g) ?? []).length >= 60, 'the whole table');
      expect(shown(dm, before).match(/same item/g)).toHaveLength(60);
    });

    it('a streamed answer is shown while it is written and arrives once, whole', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'stream');
      let partial = false;
      await waitFor(() => {
        partial ||= /Sentence 1 of/.test(shown(dm)) && !/Sentence 12 of/.test(shown(dm));
        return h.llm.served === 1 && /Sentence 12 of/.test(shown(dm));
      }, 'the whole streamed answer', 15_000);
      expect(partial, 'part of the answer was shown before the end').toBe(true);
      // A late repeat of a part would be posted before the marker's answer.
      await marker(dm);
      for (let sentence = 1; sentence <= 12; sentence++) {
        expect(shown(dm).match(new RegExp(`Sentence ${sentence} of`, 'g')), `sentence ${sentence}`).toHaveLength(1);
      }
      expect(shown(dm)).not.toMatch(/…\s*$/);
    });

    it('recovers from model failures', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'fail 1');
      await waitForMessage(h, dm, 'recovered after 1 failures');
      await h.driver.sendMessage(dm, alice, 'fail 9');
      await waitForMessage(h, dm, /the language model is not answering right now/, 15_000);
      await h.driver.sendMessage(dm, alice, 'back again');
      await waitForMessage(h, dm, 'echo: back again');
    });

    it('restores history after a restart', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'remember the number 31337');
      await waitForMessage(h, dm, 'echo: remember the number 31337');
      await h.restart();
      await h.driver.sendMessage(dm, alice, 'what number?');
      await waitForMessage(h, dm, 'echo: what number?');
      const sent = h.llm.requests.at(-1)!.messages.map((m) => String(m.content)).join('\n');
      expect(sent).toContain('31337');
    });
  });

  describe(`scenarios on ${driver.name}: attachments`, () => {
    const files = [driver.sendFile ? undefined : 'the channel takes no files'];
    const notes = { name: 'notes.md', mimeType: 'text/markdown', bytes: Buffer.from('# Notes\nThe word is pelican.\n') };

    itNeeds(files, 'saves a text file in the workspace, tells the model where, and files_read reads it', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendFile!(dm, alice, 'read attachments/notes.md', notes);
      await waitForMessage(h, dm, /pelican/);
      expect(modelSaw('[attached: notes.md (document, text/markdown, 29 bytes), saved in the workspace as attachments/notes.md; read it with files_read]')).toBe(true);
    });

    itNeeds([...files, ...groups], "in a group, the file goes to the group's workspace, where the next turn reads it", async () => {
      await start();
      const group = h.driver.group();
      await h.driver.sendFile!(group, alice, 'keep these notes', notes);
      await waitForMessage(h, group, 'echo: keep these notes');
      await h.driver.sendMessage(group, bob, 'read attachments/notes.md', { mention: true });
      await waitForMessage(h, group, /pelican/);
    });

    itNeeds(files, "saves a PDF's text beside it, which files_read reads", async () => {
      await start();
      const dm = h.driver.dm(alice);
      const report = { name: 'report.pdf', mimeType: 'application/pdf', bytes: minimalPdf(['The word is pelican.']) };
      await h.driver.sendFile!(dm, alice, 'read attachments/report.pdf.txt', report);
      await waitForMessage(h, dm, /pelican/);
      expect(modelSaw('saved in the workspace as attachments/report.pdf; its text is in attachments/report.pdf.txt: read that with files_read]')).toBe(true);
    });

    itNeeds(files, 'refuses a file over the limit with a clear answer, and still answers the text', async () => {
      await start({ attachments: { maxBytes: 1024 } });
      const dm = h.driver.dm(alice);
      await h.driver.sendFile!(dm, alice, 'hello with a big file', { name: 'big.txt', mimeType: 'text/plain', bytes: Buffer.alloc(4096, 'a') });
      await waitForMessage(h, dm, 'I could not take the attached file: big.txt is 4 KB, over the limit of 1 KB per file.');
      await waitForMessage(h, dm, 'echo: hello with a big file');
      expect(modelSaw('[attached: big.txt, not received: it is 4 KB, over the limit of 1 KB per file. The person has been told.]')).toBe(true);
    });

    itNeeds(files, 'a background job asked for with a file is told where the file is, and finishes', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendFile!(dm, alice, 'bg notes', notes);
      await h.driver.pressApproval(dm, alice, await waitForApproval(h, dm), 'approve');
      await waitForMessage(h, dm, /Job \S+ "notes" is done\./s, 10_000);
      const jobRequest = h.llm.requests.find((request) => /background job/.test(String(request.messages[0]?.content ?? '')));
      expect(String(jobRequest?.messages.find((m) => m.role === 'user')?.content)).toContain('- attachments/notes.md (document, text/markdown, 29 bytes)');
    });

    itNeeds([driver.name === 'terminal' ? undefined : 'only the terminal has a command of its own for files'], '/help lists /attach', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendCommand(dm, alice, 'help');
      await waitForMessage(h, dm, /\/attach PATH \[message\]: sends a file from this machine/);
    });

    itNeeds(files, "past a person's daily budget of files, the next file is refused and the text answered", async () => {
      await start({ attachments: { maxBytesPerUserPerDay: 40 } });
      const dm = h.driver.dm(alice);
      await h.driver.sendFile!(dm, alice, 'first file', notes);
      await waitForMessage(h, dm, 'echo: first file');
      await h.driver.sendFile!(dm, alice, 'second file', notes);
      await waitForMessage(h, dm, "notes.md would take you past today's limit of 40 bytes of files.");
      await waitForMessage(h, dm, 'echo: second file');
    });

    itNeeds(files, 'refuses a file whose bytes are not what its type says', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendFile!(dm, alice, 'look at my cat', { name: 'cat.png', mimeType: 'image/png', bytes: Buffer.from('not a picture at all') });
      await waitForMessage(h, dm, /could not take the attached file: cat\.png does not hold what it claims to be/);
      await waitForMessage(h, dm, 'echo: look at my cat');
    });
  });

  defineImageScenarios(driver, { start });
  defineVoiceScenarios(driver);

  describe(`scenarios on ${driver.name}: approvals and policy`, () => {
    it('approve runs the tool once and resumes the turn', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'note buy milk');
      const prompt = await waitForApproval(h, dm);
      expect(prompt.text).toContain('note_write');
      expect(prompt.actions).toEqual(expect.arrayContaining(['approve', 'always', 'deny']));
      expect(h.tools.notes).toHaveLength(0);
      await h.driver.pressApproval(dm, alice, prompt, 'approve');
      await waitForMessage(h, dm, 'saved note "buy milk"');
      const resolved = await waitForResolved(h, dm, prompt.messageId);
      expect(resolved.text).toMatch(/approved/i);
      expect(h.tools.notes).toEqual(['buy milk']);
    });

    it('always allow stores the choice: the same tool then runs without a prompt, after a restart too', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'note one');
      const prompt = await waitForApproval(h, dm);
      await h.driver.pressApproval(dm, alice, prompt, 'always');
      await waitForMessage(h, dm, 'saved note "one"');
      await h.restart();
      await h.driver.sendMessage(dm, alice, 'note two');
      await waitForMessage(h, dm, 'saved note "two"');
      expect(h.driver.approvals(dm)).toHaveLength(1);
      expect(h.tools.notes).toEqual(['one', 'two']);
    });

    it('deny gives the model a denial and runs nothing', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'note secret');
      const prompt = await waitForApproval(h, dm);
      await h.driver.pressApproval(dm, alice, prompt, 'deny');
      await waitForMessage(h, dm, /result: Denied by the user/);
      expect(h.tools.notes).toHaveLength(0);
      expect((await waitForResolved(h, dm, prompt.messageId)).text).toMatch(/denied/i);
    });

    it('an unanswered approval expires as a denial', async () => {
      await start({ agent: { approvalTimeoutMs: 1_000 } });
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'note later');
      const prompt = await waitForApproval(h, dm);
      await waitForMessage(h, dm, /result: The approval request expired/, 10_000);
      expect((await waitForResolved(h, dm, prompt.messageId)).text).toMatch(/expired/i);
      const notices = h.driver.privateNotices(alice).length;
      await h.driver.pressApproval(dm, alice, prompt, 'approve').catch(() => undefined);
      // The press is answered once judged; a press taken would have queued the call on the thread
      // before that answer, so it would run before the marker is answered.
      if (!driver.noLatePresses) await waitFor(() => h.driver.privateNotices(alice).length > notices, 'the late press to be answered');
      await marker(dm);
      expect(h.tools.notes).toHaveLength(0);
    });

    itNeeds(twoPeople, 'a press by another user changes nothing', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'note mine');
      const prompt = await waitForApproval(h, dm);
      await h.driver.pressApproval(dm, bob, prompt, 'approve');
      await waitFor(() => h.driver.privateNotices(bob).some((t) => t.includes(`Only ${alice.name}`)), 'a not-yours notice to bob');
      expect(h.tools.notes).toHaveLength(0);
      expect(h.driver.approvals(dm)[0]!.actions.length).toBeGreaterThan(0);
      await h.driver.pressApproval(dm, alice, prompt, 'approve');
      await waitForMessage(h, dm, 'saved note "mine"');
    });

    itNeeds(latePresses, 'a second press is told the request was already answered; the tool runs once', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'note twice');
      const prompt = await waitForApproval(h, dm);
      await Promise.all([h.driver.pressApproval(dm, alice, prompt, 'approve'), h.driver.pressApproval(dm, alice, prompt, 'approve')]);
      await waitForMessage(h, dm, 'saved note "twice"');
      await waitFor(() => h.driver.privateNotices(alice).some((t) => /already answered/i.test(t)), 'an already-answered notice');
      expect(h.tools.notes).toEqual(['twice']);
    });

    itNeeds(latePresses, 'a press after a restart resumes the turn and runs the tool once', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'note survive');
      const prompt = await waitForApproval(h, dm);
      await h.restart();
      await h.driver.pressApproval(dm, alice, prompt, 'approve');
      await h.driver.pressApproval(dm, alice, prompt, 'approve');
      await waitForMessage(h, dm, 'saved note "survive"');
      await waitFor(() => h.driver.privateNotices(alice).some((t) => /already answered/i.test(t)), 'the second press to be refused');
      await marker(dm);
      expect(h.tools.notes).toEqual(['survive']);
    });

    itNeeds(latePresses, 'a press of a prompt the bot no longer knows (its data was reset) gets the stale-button notice and runs nothing', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'note forgotten');
      const prompt = await waitForApproval(h, dm);
      await h.close();
      await start();
      await h.driver.pressApproval(dm, alice, prompt, 'approve');
      await waitFor(() => h.driver.privateNotices(alice).includes(STALE_BUTTON), 'the stale-button notice');
      expect(h.tools.notes).toEqual([]);
      expect(h.llm.requests).toHaveLength(0);
    });

    it('a new message while an approval is pending counts as a denial and continues with the message', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'note pending');
      const prompt = await waitForApproval(h, dm);
      await h.driver.sendMessage(dm, alice, 'never mind');
      await waitForMessage(h, dm, 'echo: never mind');
      expect(h.tools.notes).toHaveLength(0);
      await waitForResolved(h, dm, prompt.messageId);
      const sent = h.llm.requests.at(-1)!.messages.map((m) => String(m.content)).join('\n');
      expect(sent).toContain('Not run: the user sent a new message');
    });

    it('/stop while an approval is pending cancels it', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'note cancel-me');
      const prompt = await waitForApproval(h, dm);
      await h.driver.sendCommand(dm, alice, 'stop');
      expect((await waitForResolved(h, dm, prompt.messageId)).text).toMatch(/cancelled/i);
      if (!driver.noLatePresses) {
        await h.driver.pressApproval(dm, alice, prompt, 'approve');
        await waitFor(() => h.driver.privateNotices(alice).some((t) => /already answered|no longer valid/i.test(t)), 'a stale-press notice');
      }
      await marker(dm);
      expect(h.tools.notes).toHaveLength(0);
    });

    it('a batch with two approval calls and one free call asks one at a time', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'batch');
      const first = await waitForApproval(h, dm, 0);
      expect(first.text).toContain('first');
      await h.driver.pressApproval(dm, alice, first, 'approve');
      const second = await waitForApproval(h, dm, 1);
      expect(second.text).toContain('second');
      expect(h.tools.notes).toEqual(['first']);
      await h.driver.pressApproval(dm, alice, second, 'approve');
      const answer = await waitForMessage(h, dm, /result: .*saved note "second"/);
      expect(answer.text).toContain('saved note "first"');
      expect(answer.text).toContain('2+2 = 4');
      expect(h.tools.notes).toEqual(['first', 'second']);
    });

    itNeeds(groups, 'in a group, a call that needs approval is refused with the reason and no prompt is posted', async () => {
      await start();
      const group = h.driver.group();
      await h.driver.sendMessage(group, alice, 'note in-group', { mention: true });
      await waitForMessage(h, group, /result: .*direct message/);
      expect(h.driver.approvals(group)).toHaveLength(0);
      expect(h.tools.notes).toHaveLength(0);
    });

    it('an admin disabling a tool mid-turn removes it from the next model request, persistently', async () => {
      await start();
      const dm = h.driver.dm(owner);
      await h.driver.sendMessage(dm, owner, 'slow 1500');
      await waitFor(() => h.tools.slowStarted === 1, 'the slow tool to start');
      await h.driver.sendCommand(dm, owner, 'policy', 'disable calculator global');
      await waitFor(
        () => [...driver.messages(dm).map((m) => m.text), ...driver.privateNotices(owner)].some((t) => /calculator.*disable/i.test(t)),
        'the policy confirmation',
      );
      await waitForMessage(h, dm, 'waited 1500 ms', 10_000);
      const names = h.llm.requests.at(-1)!.tools?.map((t) => t.function.name) ?? [];
      expect(names).not.toContain('calculator');
      await h.restart();
      await h.driver.sendMessage(dm, owner, 'calc 1+1');
      await waitForMessage(h, dm, 'no tool calculator offered');
    });

    itNeeds([...groups, ...twoPeople], '/policy from a non-admin is refused and changes nothing', async () => {
      await start();
      const group = h.driver.group();
      await h.driver.sendCommand(group, bob, 'policy', 'disable calculator');
      await waitFor(
        () => [...driver.privateNotices(bob), ...driver.messages(group).map((m) => m.text)].some((t) => /only an admin/i.test(t)),
        'a refusal',
      );
      // The tool is still offered to the model here and still runs.
      await h.driver.sendMessage(group, bob, 'calc 2+3', { mention: true });
      await waitForMessage(h, group, /result: .*2\+3 = 5/);
      expect(h.llm.requests[0]!.tools?.map((t) => t.function.name)).toContain('calculator');
      expect(h.llm.requests.at(-1)!.messages.filter((m) => m.role === 'tool').map((m) => String(m.content)).join('\n')).toContain('2+3 = 5');
    });

    it('a model going in circles: a DM asks Continue / Stop / Try another way, a group stops with a report', async () => {
      // Room for the cycle to come round: told once, then asked.
      await start({ agent: { maxToolIterations: 10 } });
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'cycle');
      const question = await waitForApproval(h, dm);
      expect(question.actions).toEqual(['continue', 'stop', 'redirect']);
      expect(question.text).toMatch(/going in circles/i);
      expect(question.text).toContain('calculator');
      await h.driver.pressApproval(dm, alice, question, 'stop');
      await waitForMessage(h, dm, /I stopped here because I was going in circles/);
      expect((await waitForResolved(h, dm, question.messageId)).actions).toEqual([]);

      await h.driver.sendMessage(dm, alice, 'cycle');
      const again = await waitForApproval(h, dm, 1);
      await h.driver.pressApproval(dm, alice, again, 'redirect');
      await waitForMessage(h, dm, 'ok, trying another way');
      if (driver.noGroups) return;

      const group = h.driver.group();
      await h.driver.sendMessage(group, alice, 'cycle', { mention: true });
      await waitForMessage(h, group, /I stopped here because I was going in circles: .*calculator/s);
      expect(h.driver.approvals(group)).toEqual([]);
    });

    it('a model calling a tool that does not exist is warned, then made to answer in text: the person gets the answer, not a question', async () => {
      await start({ agent: { maxToolIterations: 10 } });
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'nosuch tides');
      await waitForMessage(h, dm, NO_SUCH_TOOL_ANSWER);
      expect(h.driver.approvals(dm)).toEqual([]);
      // Tools offered for four identical failing batches, then none: the answer is text.
      expect(h.llm.requests.map((request) => (request.tools?.length ?? 0) > 0)).toEqual([true, true, true, true, false]);
      expect(modelSaw(REPEATED_FAILURE_NOTICE)).toBe(true);
      if (driver.noGroups) return;

      const group = h.driver.group();
      await h.driver.sendMessage(group, alice, 'nosuch tides', { mention: true });
      await waitForMessage(h, group, NO_SUCH_TOOL_ANSWER);
      expect(h.driver.messages(group).map((m) => m.text).join('\n')).not.toMatch(/going in circles/);
    });

    it('/permissions lists a tool set to Always allow and resets it: the tool asks first again', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'note one');
      await h.driver.pressApproval(dm, alice, await waitForApproval(h, dm), 'always');
      await waitForMessage(h, dm, 'saved note "one"');
      await h.driver.sendCommand(dm, alice, 'permissions');
      await waitFor(() => seenBy(alice, dm).some((t) => /note_write: always allowed/.test(t)), () => `the list; seen ${JSON.stringify(seenBy(alice, dm))}`);
      await h.driver.sendCommand(dm, alice, 'permissions', 'reset note_write');
      await waitFor(() => seenBy(alice, dm).some((t) => /Reset: note_write/.test(t)), () => `the reset; seen ${JSON.stringify(seenBy(alice, dm))}`);
      await h.driver.sendMessage(dm, alice, 'note two');
      await waitForApproval(h, dm, 1);
      expect(h.tools.notes).toEqual(['one']);
    });

    it('/model lists the models and switches this conversation; its next requests use the new model, after a restart too', async () => {
      await start({ llm: { models: [{ name: 'fake-model' }, { name: 'other-model', price: { input: 1, output: 2 } }] } });
      const dm = h.driver.dm(alice);
      await h.driver.sendCommand(dm, alice, 'model');
      await waitFor(() => seenBy(alice, dm).some((t) => /fake-model .*in use here.*price unknown/s.test(t) && /other-model.*\$1 in/s.test(t)), () => `the model list; seen ${JSON.stringify(seenBy(alice, dm))}`);
      await h.driver.sendCommand(dm, alice, 'model', 'use other-model');
      await waitFor(() => seenBy(alice, dm).some((t) => /now uses other-model/.test(t)), () => `the switch; seen ${JSON.stringify(seenBy(alice, dm))}`);
      await h.driver.sendMessage(dm, alice, 'which model');
      await waitForMessage(h, dm, 'echo: which model');
      expect(h.llm.requests.at(-1)!.model).toBe('other-model');
      await h.restart();
      await h.driver.sendMessage(dm, alice, 'still the same');
      await waitForMessage(h, dm, 'echo: still the same');
      expect(h.llm.requests.at(-1)!.model).toBe('other-model');
      await h.driver.sendCommand(dm, alice, 'status');
      await waitFor(() => seenBy(alice, dm).some((t) => /Model: other-model/.test(t)), () => `the status; seen ${JSON.stringify(seenBy(alice, dm))}`);
    });

    it('a slow tool that runs once approved shows its progress with the elapsed time, and /status says what runs and for how long', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'danger wait 3500');
      await h.driver.pressApproval(dm, alice, await waitForApproval(h, dm), 'approve');
      await waitForMessage(h, dm, /Running .?danger.?… \d+ s/, 5_000);
      await h.driver.sendCommand(dm, alice, 'status');
      await waitFor(() => seenBy(alice, dm).some((t) => /running .?danger.? for \d+ s/.test(t)), () => `the status; seen ${JSON.stringify(seenBy(alice, dm))}`);
      await waitForMessage(h, dm, 'danger done on wait 3500', 10_000);
    });

    it('a background job asked for in a DM runs on its own and posts its progress and result there', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'bg answer');
      const prompt = await waitForApproval(h, dm);
      expect(prompt.text).toContain('create_job');
      await h.driver.pressApproval(dm, alice, prompt, 'approve');
      await waitForMessage(h, dm, /Job \S+ "answer" is done\.\s+the job found .*6\*7 = 42/s, 10_000);
      // The status message shows the end too, unless an edit would print it again (a terminal): there the result alone says it.
      const channel = h.app.services.outbox.channelOf({ channel: h.driver.name, chatId: dm.id });
      if (!channel?.capabilities.editsMayRepeat) await waitForMessage(h, dm, /✅ Job \S+ "answer": done/);
      await h.driver.sendCommand(dm, alice, 'jobs');
      await waitFor(() => seenBy(alice, dm).some((t) => /Jobs:\n• ✅ Job \S+ "answer": done/.test(t)), () => `the job list; seen ${JSON.stringify(seenBy(alice, dm))}`);
    });

    itNeeds(groups, 'in a group, a background job is refused: creating one needs an approval', async () => {
      await start();
      const group = h.driver.group();
      await h.driver.sendMessage(group, alice, 'bg grouped', { mention: true });
      await waitForMessage(h, group, /result: .*direct message/);
      expect(h.driver.approvals(group)).toHaveLength(0);
      expect(await h.app.services.jobs.list()).toEqual([]);
    });

    it('/routines lists a daily reminder with its next firing, pauses it and deletes it', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'daily water the plants');
      const prompt = await waitForApproval(h, dm);
      expect(prompt.text).toMatch(/every day at 09:00 UTC/);
      await h.driver.pressApproval(dm, alice, prompt, 'approve');
      await waitForMessage(h, dm, /result: .*"id":"r\w+"/);
      const seen = () => seenBy(alice, dm).join('\n');
      await h.driver.sendCommand(dm, alice, 'routines');
      const listed = await waitFor(() => /• (r\w+): reminder "water the plants", every day at 09:00 UTC; next \d{4}-\d\d-\d\d 09:00 UTC/.exec(seen()) ?? undefined, () => `the list; seen ${seen()}`);
      const id = listed[1]!;
      await h.driver.sendCommand(dm, alice, 'routines', `pause ${id}`);
      await waitFor(() => seen().includes(`Routine ${id} is paused.`), () => `the pause; seen ${seen()}`);
      expect((await h.app.services.routines.get(id))?.enabled).toBe(false);
      await h.driver.sendCommand(dm, alice, 'routines', `delete ${id}`);
      await waitFor(() => seen().includes(`Routine ${id} is deleted.`), () => `the deletion; seen ${seen()}`);
      expect(await h.app.services.routines.list()).toEqual([]);
    });

    it('/mcp shows an admin each MCP server\'s state and tool count; anyone else is refused', async () => {
      const fixture = join(import.meta.dirname, '..', 'fakes', 'mcp', 'server.ts');
      await start({ mcp: { servers: { fix: { command: process.execPath, args: ['--import', 'tsx', fixture], approval: 'never' as const } } } });
      const dm = h.driver.dm(owner);
      await h.driver.sendCommand(dm, owner, 'mcp');
      await waitFor(() => seenBy(owner, dm).some((t) => /fix: ready \(stdio\), 4 tools/.test(t)), () => `the /mcp status; seen ${JSON.stringify(seenBy(owner, dm))}`);
      expect(h.llm.requests).toHaveLength(0);
      if (!driver.singleUser) {
        const other = h.driver.dm(bob);
        await h.driver.sendCommand(other, bob, 'mcp');
        await waitFor(() => seenBy(bob, other).some((t) => /Only an admin/i.test(t)), () => `a refusal; seen ${JSON.stringify(seenBy(bob, other))}`);
      }
    });

    it('a tool that always needs approval offers no "always allow"', async () => {
      await start();
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'danger reactor');
      const prompt = await waitForApproval(h, dm);
      expect(prompt.actions).toEqual(expect.arrayContaining(['approve', 'deny']));
      expect(prompt.actions).not.toContain('always');
      await h.driver.pressApproval(dm, alice, prompt, 'approve');
      await waitForMessage(h, dm, 'danger done on reactor');
      await h.driver.sendMessage(dm, alice, 'danger again');
      await waitForApproval(h, dm, 1);
    });
  });
  const accessTitle = `scenarios on ${driver.name}: who may use the bot${driver.noAllowlists ? ` (skipped: ${driver.noAllowlists})` : ''}`;
  describe(accessTitle, () => {
    const itAccess = it.skipIf(Boolean(driver.noAllowlists));

    itAccess('with a user list, a listed user and the owner are answered in DMs; anyone else is not', async () => {
      await start({}, { access: { users: [alice] } });
      await h.driver.sendMessage(h.driver.dm(bob), bob, 'let me in');
      await h.driver.sendMessage(h.driver.dm(alice), alice, 'hello from alice');
      await waitForMessage(h, h.driver.dm(alice), 'echo: hello from alice');
      // Owners count as listed users: a list that forgets them does not lock them out.
      await h.driver.sendMessage(h.driver.dm(owner), owner, 'hello from the owner');
      await waitForMessage(h, h.driver.dm(owner), 'echo: hello from the owner');
      // Bob's DM is another thread, so its turn would not be ordered before these answers; its
      // message would have reached the app before them, though, and it did not.
      expect(reachedApp(h.driver.dm(bob))).toBe(false);
      expect(modelSaw('let me in')).toBe(false);
      expect(h.driver.messages(h.driver.dm(bob))).toEqual([]);
      expect(h.llm.requests).toHaveLength(2);
    });

    itAccess('with a conversation list, a listed group is answered and another is not; DMs are left to the user list', async () => {
      const listed = driver.group();
      const unlisted = driver.group();
      await start({}, { access: { conversations: [listed] } });
      await h.driver.sendMessage(unlisted, bob, 'from the unlisted group', { mention: true });
      await h.driver.sendMessage(listed, bob, 'from the listed group', { mention: true });
      await waitForMessage(h, listed, 'echo: from the listed group');
      await h.driver.sendMessage(h.driver.dm(bob), bob, 'from a dm');
      await waitForMessage(h, h.driver.dm(bob), 'echo: from a dm');
      // Another thread: checked by its arrival at the app, which comes in the channel's order.
      expect(reachedApp(unlisted)).toBe(false);
      expect(modelSaw('from the unlisted group')).toBe(false);
      expect(h.driver.messages(unlisted)).toEqual([]);
    });

    itAccess('with both lists, both must admit: a listed user in an unlisted group is not answered', async () => {
      const listed = driver.group();
      const unlisted = driver.group();
      // "alice, in DMs and in the listed group", not "alice anywhere plus anyone in the group".
      await start({}, { access: { users: [alice], conversations: [listed] } });
      await h.driver.sendMessage(unlisted, alice, 'alice elsewhere', { mention: true });
      await h.driver.sendMessage(listed, bob, 'bob in the listed group', { mention: true });
      await h.driver.sendMessage(listed, alice, 'alice in the listed group', { mention: true });
      await waitForMessage(h, listed, 'echo: alice in the listed group');
      await h.driver.sendMessage(h.driver.dm(alice), alice, 'alice in a dm');
      await waitForMessage(h, h.driver.dm(alice), 'echo: alice in a dm');
      // Other threads: checked by their arrival at the app, which comes in the channel's order.
      expect(reachedApp(unlisted)).toBe(false);
      expect(h.inbound.filter((thread) => thread.startsWith(threadKeyOf({ channel: h.driver.name, chatId: listed.id })))).toHaveLength(1);
      expect(modelSaw('alice elsewhere')).toBe(false);
      expect(modelSaw('bob in the listed group')).toBe(false);
      expect(h.driver.messages(unlisted)).toEqual([]);
    });

    itAccess('a command from outside the allowlists gets the shared refusal and runs nothing', async () => {
      await start({}, { access: { users: [alice] } });
      const dm = h.driver.dm(bob);
      await h.driver.sendCommand(dm, bob, 'status');
      await waitFor(() => seenBy(bob, dm).includes(NOT_AVAILABLE), () => `the refusal; bob saw ${JSON.stringify(seenBy(bob, dm))}`);
      // The channel refuses in the order events come, and Alice's marker comes after Bob's command:
      // a second refusal, or the command let through, would show by the marker's answer.
      await marker(h.driver.dm(alice));
      expect(reachedApp(dm)).toBe(false);
      expect(seenBy(bob, dm)).toEqual([NOT_AVAILABLE]);
      // The one model request is the marker's.
      expect(h.llm.requests).toHaveLength(1);
    });

    itAccess('a button press from outside the allowlists gets the shared refusal and changes nothing', async () => {
      await start({}, { access: { users: [alice] } });
      const dm = h.driver.dm(alice);
      await h.driver.sendMessage(dm, alice, 'note mine alone');
      const prompt = await waitForApproval(h, dm);
      await h.driver.pressApproval(dm, bob, prompt, 'approve');
      await waitFor(() => h.driver.privateNotices(bob).includes(NOT_AVAILABLE), () => `the refusal; bob saw ${JSON.stringify(h.driver.privateNotices(bob))}`);
      expect(h.tools.notes).toHaveLength(0);
      expect(h.driver.approvals(dm)[0]!.actions.length).toBeGreaterThan(0);
      await h.driver.pressApproval(dm, alice, prompt, 'approve');
      await waitForMessage(h, dm, 'saved note "mine alone"');
    });
  });
}
