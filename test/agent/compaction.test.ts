/**
 * Context compaction through the real runtime and the openai-SDK provider: a
 * history past `maxContextTokens * compactThreshold` is summarised by the model
 * and the recent messages are kept verbatim (the summary cleaned of the
 * model's reasoning); a context-length error from the endpoint compacts and
 * retries once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SUMMARY_PREFIX } from '../../src/engine/compaction.js';
import { contextLengthError, textReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { echoAll, startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const SUMMARY = 'The user shared numbered facts about fruit.';
const user = { id: 'long', name: 'Long Talker' };
const chat = testDm(user.id);

/** A summary request is the one compaction makes: its own system prompt, no tools. */
function isSummaryRequest(request: FakeLlmRequest): boolean {
  return String(request.messages[0]?.content).startsWith('Summarise the conversation');
}

/** Summary requests get SUMMARY; the rest go to `chat`. */
function withSummaries(chatAnswer: (request: FakeLlmRequest) => FakeLlmEntry) {
  return (request: FakeLlmRequest): FakeLlmEntry => (isSummaryRequest(request) ? textReply(SUMMARY) : chatAnswer(request));
}

/** A user message of about `size` characters, unique by `n`, that never repeats itself. */
function fact(n: number, size = 400): string {
  const words = Array.from({ length: size / 5 }, (_, i) => String(n * 10_000 + i * 37));
  return `fact ${n}: ${words.join(' ')}`.slice(0, size);
}

/** The conversation (without system prompt) as the model saw it in a request. */
function conversationOf(request: FakeLlmRequest): Array<{ role: string; content: string }> {
  return request.messages.slice(1).map((m) => ({ role: m.role, content: String(m.content) }));
}

async function say(text: string): Promise<void> {
  rig!.platform.channel.userMessage({ chat, sender: user, text });
  await rig!.app.runtime.idle();
}

describe('compaction', () => {
  it('summarises older turns past the threshold, keeps the recent messages verbatim, and the conversation goes on', async () => {
    rig = await startAppRig({
      config: { agent: { maxContextTokens: 1000, compactThreshold: 0.8, keepRecentMessages: 4 } },
      responder: withSummaries(echoAll),
    });
    const said: string[] = [];
    for (let n = 1; n <= 12 && !rig.llm.requests.some(isSummaryRequest); n++) {
      said.push(fact(n));
      await say(fact(n));
    }
    const summaryAt = rig.llm.requests.findIndex(isSummaryRequest);
    expect(summaryAt, 'no summary request although the history grew past the threshold').toBeGreaterThan(0);
    // What the conversation was just before compaction: the previous request, its answer, the new message.
    const before = [...conversationOf(rig.llm.requests[summaryAt - 1]!), { role: 'assistant', content: `echo: ${said.at(-2)}` }, { role: 'user', content: said.at(-1)! }];
    const transcript = String(rig.llm.requests[summaryAt]!.messages[1]!.content);
    expect(transcript).toContain(said[0]);

    const after = conversationOf(rig.llm.requests[summaryAt + 1]!);
    expect(after[0]).toEqual({ role: 'user', content: SUMMARY_PREFIX + SUMMARY });
    const kept = after.slice(1);
    expect(kept.length).toBeGreaterThanOrEqual(4);
    expect(kept[0]!.role).toBe('user');
    // The kept tail is the end of the conversation, word for word; everything before it went into the summary.
    expect(kept).toEqual(before.slice(before.length - kept.length));
    const folded = before.slice(0, before.length - kept.length);
    expect(folded.length).toBeGreaterThan(0);
    for (const message of folded) expect(transcript).toContain(message.content);
    expect(after.map((m) => m.content).join('\n')).not.toContain(said[0]);
    expect(rig.platform.lastMessage(chat)!.text).toBe(`echo: ${said.at(-1)}`);

    // The next turn carries the summary and is answered.
    await say('and what now?');
    const next = rig.llm.requests.at(-1)!;
    expect(isSummaryRequest(next)).toBe(false);
    expect(next.messages.map((m) => String(m.content)).join('\n')).toContain(SUMMARY);
    expect(rig.platform.lastMessage(chat)!.text).toBe('echo: and what now?');
  });

  it('on a context-length error, compacts and retries once, and the user gets the answer', async () => {
    let refused = 0;
    rig = await startAppRig({
      config: { agent: { maxContextTokens: 100_000, keepRecentMessages: 12 } },
      responder: withSummaries((request) => {
        if (userTextsOf(request).includes('one too many') && !request.messages.some((m) => String(m.content).startsWith(SUMMARY_PREFIX))) {
          refused += 1;
          return contextLengthError();
        }
        return echoAll(request);
      }),
    });
    for (let n = 1; n <= 4; n++) await say(fact(n, 100));
    expect(rig.llm.requests.some(isSummaryRequest)).toBe(false);
    await say('one too many');
    expect(refused).toBe(1);
    const summaryAt = rig.llm.requests.findIndex(isSummaryRequest);
    expect(summaryAt).toBe(rig.llm.requests.length - 2);
    const retry = conversationOf(rig.llm.requests.at(-1)!);
    expect(retry[0]).toEqual({ role: 'user', content: SUMMARY_PREFIX + SUMMARY });
    expect(retry.at(-1)).toEqual({ role: 'user', content: 'one too many' });
    expect(retry.map((m) => m.content).join('\n')).not.toContain(fact(1, 100));
    expect(rig.platform.messagesIn(chat).map((m) => m.text).at(-1)).toBe('echo: one too many');
  });

  it('keeps the summary without the reasoning block the model wrote before it', async () => {
    rig = await startAppRig({
      config: { agent: { maxContextTokens: 100_000 } },
      responder: (request) => {
        if (isSummaryRequest(request)) return textReply(`<think>The facts are about fruit; keep it short.</think>\n${SUMMARY}`);
        const summarised = request.messages.some((m) => String(m.content).startsWith(SUMMARY_PREFIX));
        return userTextsOf(request).includes('one too many') && !summarised ? contextLengthError() : echoAll(request);
      },
    });
    for (let n = 1; n <= 4; n++) await say(fact(n, 100));
    await say('one too many');
    const retry = conversationOf(rig.llm.requests.at(-1)!);
    expect(retry[0]).toEqual({ role: 'user', content: SUMMARY_PREFIX + SUMMARY });
    expect(rig.platform.lastMessage(chat)!.text).toBe('echo: one too many');
  });

  it('retries only once: a second context-length error is reported to the user', async () => {
    rig = await startAppRig({
      config: { agent: { maxContextTokens: 100_000 } },
      responder: withSummaries((request) => (userTextsOf(request).includes('still too long') ? contextLengthError() : echoAll(request))),
    });
    for (let n = 1; n <= 4; n++) await say(fact(n, 100));
    const before = rig.llm.requests.length;
    await say('still too long');
    const made = rig.llm.requests.slice(before);
    expect(made.filter(isSummaryRequest)).toHaveLength(1);
    expect(made.filter((r) => !isSummaryRequest(r))).toHaveLength(2);
    expect(rig.platform.lastMessage(chat)!.text).toMatch(/too long for the model even after summarising.*\/new/);
  });
});

function userTextsOf(request: FakeLlmRequest): string[] {
  return request.messages.filter((m) => m.role === 'user').map((m) => String(m.content));
}
