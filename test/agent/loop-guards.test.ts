/**
 * The loop guards end to end: the real app with the openai-SDK provider and
 * the fake model, over the test channel. A cycle of calls in a DM asks the
 * person (each button does what it says); in a group it stops with a report;
 * long answers arrive whole; a degenerate stream is cut with a notice; a reply
 * cut by the length limit is continued; a false claim is corrected.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { claimsCorrection } from '../../src/engine/guards/claims.js';
import { REPEATED_FAILURE_NOTICE } from '../../src/engine/guards/notices.js';
import { REPETITION_CUT_NOTE } from '../../src/engine/guards/repeated-text.js';
import { LOOP_ANSWERS } from '../../src/chat/turn.js';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { scenarioTools, ToolLog } from '../scenarios/tools.js';
import { startAppRig, userTextsSinceAnswer, type AppRig } from '../support/app-rig.js';
import { testDm, testGroup } from '../support/test-channel.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const ada = { id: 'ada', name: 'Ada' };
const ben = { id: 'ben', name: 'Ben' };
const contents = (request: FakeLlmRequest) => request.messages.map((m) => String(m.content ?? ''));

/** Alternates two calculator calls for "cycle" (A,B,A,B...); answers in text once told to try another way. */
function cyclingModel(request: FakeLlmRequest): FakeLlmEntry {
  const seen = contents(request);
  if (seen.some((text) => text === LOOP_ANSWERS.redirect)) return textReply('Trying another way: the answer is 2.');
  if (seen.some((text) => text.includes('cycle'))) {
    const calls = request.messages.filter((m) => m.role === 'tool').length;
    return toolCallReply([{ name: 'calculator', arguments: { expression: calls % 2 === 0 ? '1+1' : '2+2' } }]);
  }
  return textReply(`echo: ${userTextsSinceAnswer(request).join(' ')}`);
}

async function cycleInDm(): Promise<{ chat: ReturnType<typeof testDm>; prompt: AppRig['platform']['approvals'][number] }> {
  rig = await startAppRig({ responder: cyclingModel, tools: scenarioTools(new ToolLog()) });
  const chat = testDm(ada.id);
  rig.platform.channel.userMessage({ chat, sender: ada, text: 'cycle please' });
  const prompt = await rig.platform.waitFor(() => rig!.platform.approvalsIn(chat)[0], 10_000, 'the loop question');
  return { chat, prompt };
}

describe('a cycle of calls in a DM asks the person', () => {
  it('shows Continue, Stop and Try another way, with what repeats; Stop ends the turn with a report', async () => {
    const { chat, prompt } = await cycleInDm();
    expect(prompt.actions).toEqual(['continue', 'stop', 'redirect']);
    expect(prompt.text).toMatch(/going in circles/i);
    expect(prompt.text).toContain('calculator');
    // The model was told first: a note before the question.
    expect(rig!.llm.requests.some((r) => contents(r).some((text) => text.includes('You are going in circles')))).toBe(true);
    const served = rig!.llm.served;

    rig!.platform.channel.press(prompt.prompt.id, 'stop', ada);
    const report = await rig!.platform.waitFor(() => rig!.platform.messagesIn(chat).find((m) => m.text.startsWith('I stopped here')), 10_000, 'the report');
    expect(report.text).toContain('calculator');
    expect(rig!.llm.served).toBe(served);
    await rig!.platform.waitFor(() => prompt.state === 'resolved', 5_000, 'the resolved prompt');
  });

  it('Try another way tells the model and the turn goes on', async () => {
    const { chat, prompt } = await cycleInDm();
    rig!.platform.channel.press(prompt.prompt.id, 'redirect', ada);
    await rig!.platform.waitFor(() => rig!.platform.messagesIn(chat).find((m) => m.text === 'Trying another way: the answer is 2.'), 10_000, 'the new approach');
    expect(contents(rig!.llm.requests.at(-1)!)).toContain(LOOP_ANSWERS.redirect);
  });

  it('Continue runs on with fresh detectors: the loop is asked about again later', async () => {
    const { chat, prompt } = await cycleInDm();
    const served = rig!.llm.served;
    rig!.platform.channel.press(prompt.prompt.id, 'continue', ada);
    const second = await rig!.platform.waitFor(() => rig!.platform.approvalsIn(chat)[1], 10_000, 'a second loop question');
    expect(second.actions).toEqual(['continue', 'stop', 'redirect']);
    // Fresh detectors: several more rounds ran before the next question.
    expect(rig!.llm.served - served).toBeGreaterThanOrEqual(4);
  });

  it('a press by someone else changes nothing, and no answer in time counts as Stop', async () => {
    rig = await startAppRig({ responder: cyclingModel, tools: scenarioTools(new ToolLog()), config: { agent: { approvalTimeoutMs: 1_000 } } });
    const chat = testDm(ada.id);
    rig.platform.channel.userMessage({ chat, sender: ada, text: 'cycle please' });
    const prompt = await rig.platform.waitFor(() => rig!.platform.approvalsIn(chat)[0], 10_000, 'the loop question');
    rig.platform.channel.press(prompt.prompt.id, 'continue', ben);
    const report = await rig.platform.waitFor(() => rig!.platform.messagesIn(chat).find((m) => m.text.startsWith('I stopped here')), 10_000, 'the expiry report');
    expect(report.text).toContain('calculator');
    expect(prompt.outcome?.decision).toBe('expired');
  });
});

describe('a cycle of calls in a group', () => {
  it('stops with a report of what repeated and shows no buttons', async () => {
    rig = await startAppRig({ responder: cyclingModel, tools: scenarioTools(new ToolLog()) });
    const chat = testGroup('g1');
    rig.platform.channel.userMessage({ chat, sender: ada, text: 'cycle please', mentionsBot: true });
    const report = await rig.platform.waitFor(() => rig!.platform.messagesIn(chat).find((m) => m.text.startsWith('I stopped here')), 10_000, 'the report');
    expect(report.text).toMatch(/going in circles.*calculator/s);
    expect(rig.platform.approvalsIn(chat)).toEqual([]);
  });
});

/**
 * Calls a tool that does not exist, with the same arguments, for as long as it
 * is offered tools; answers in text once it is not.
 */
function unknownToolModel(request: FakeLlmRequest): FakeLlmEntry {
  if (!request.tools?.length) return textReply('I have no web search here, so I cannot look that up. From memory: Lisbon.');
  return toolCallReply([{ name: 'web_search_pro', arguments: { query: 'capital of Portugal' } }]);
}

describe('identical failing batches', () => {
  it.each([
    ['a DM', testDm(ada.id), false],
    ['a group', testGroup('g1'), true],
  ])('in %s: a warning at the 2nd, forced text at the 4th, and the person gets the answer, no question', async (_where, chat, mention) => {
    rig = await startAppRig({ responder: unknownToolModel, tools: scenarioTools(new ToolLog()) });
    rig.platform.channel.userMessage({ chat, sender: ada, text: 'What is the capital of Portugal?', mentionsBot: mention });
    await rig.platform.waitFor(() => rig!.platform.messagesIn(chat)[0] ?? rig!.platform.approvalsIn(chat)[0], 10_000, 'a reply or a question');
    await rig.app.runtime.idle();

    expect(rig.platform.approvalsIn(chat)).toEqual([]);
    expect(rig.platform.messagesIn(chat).map((m) => m.text)).toEqual(['I have no web search here, so I cannot look that up. From memory: Lisbon.']);
    const requests = rig.llm.requests;
    expect(requests.map((request) => (request.tools?.length ?? 0) > 0)).toEqual([true, true, true, true, false]);
    const warnings = requests.map((request) => contents(request).filter((text) => text === REPEATED_FAILURE_NOTICE).length);
    // The request after the n-th batch is requests[n]: warned from the 2nd identical failing batch on.
    expect(warnings).toEqual([0, 0, 1, 2, 3]);
  });
});

describe('answers', () => {
  /** Sends one message answered by `reply` (then echoes), and returns what the person read. */
  async function answerOf(reply: (request: FakeLlmRequest, index: number) => FakeLlmEntry): Promise<string> {
    let index = 0;
    rig = await startAppRig({ responder: (request) => reply(request, index++) });
    const chat = testDm(ada.id);
    rig.platform.channel.userMessage({ chat, sender: ada, text: 'tell me' });
    await rig.platform.waitFor(() => rig!.platform.messagesIn(chat).length > 0, 10_000, 'the answer');
    await rig.app.runtime.idle();
    return rig.platform.messagesIn(chat).map((m) => m.text).join('\n');
  }
  const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

  it('a 10,000-character answer of 20 paragraphs that reuse the same phrases arrives whole', async () => {
    const long = Array.from(
      { length: 20 },
      (_, i) => `As noted before, the key point of part ${i + 1} is that we check the inputs and then we check the outputs again. ` + 'As noted before, this matters. '.repeat(14),
    ).join('\n\n');
    expect(long.length).toBeGreaterThan(9_000);
    expect(squash(await answerOf(() => textReply(long)))).toBe(squash(long));
  });

  it('a table of 60 rows arrives whole', async () => {
    const table = ['| # | item | state |', '| --- | --- | --- |', ...Array.from({ length: 60 }, () => '| 1 | same item | ok |')].join('\n');
    const shown = squash(await answerOf(() => textReply(`Here it is:\n\n${table}`)));
    expect(shown.match(/same item/g)).toHaveLength(60);
  });

  it('a degenerate stream is cut, with the notice', async () => {
    const shown = await answerOf(() => textReply(`Let me think.\n\n${'I need to check the config again. '.repeat(120)}`));
    expect(squash(shown)).toBe(squash(`Let me think.\n\nI need to check the config again.\n\n${REPETITION_CUT_NOTE}`));
  });

  it('a reply cut by the length limit is continued and arrives once, whole', async () => {
    const shown = await answerOf((request, index) => {
      if (index === 0) return textReply('The three steps are: first, back up the data; second, stop the', { finishReason: 'length' });
      expect(contents(request).at(-1)).toMatch(/cut off by the length limit/);
      return textReply('stop the service; third, upgrade.');
    });
    expect(shown).toBe('The three steps are: first, back up the data; second, stop the service; third, upgrade.');
    expect(rig!.llm.requests).toHaveLength(2);
  });

  it('a false "I wrote notes.md" is corrected before it is delivered', async () => {
    const shown = await answerOf((request, index) => {
      if (index === 0) return textReply('I wrote notes.md with your list.');
      return textReply(contents(request).at(-1)!.startsWith('Before this answer goes to the user') ? 'I have not written notes.md: I had no tool call for it.' : 'unexpected');
    });
    expect(shown).toBe('I have not written notes.md: I had no tool call for it.');
    expect(contents(rig!.llm.requests[1]!).at(-1)).toBe(claimsCorrection(['you said you wrote or changed notes.md, but no tool call in this turn wrote it']));
  });
});
