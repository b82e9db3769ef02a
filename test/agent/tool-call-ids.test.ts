/**
 * Models that repeat or omit tool-call ids: the conversation must stay usable.
 * The fake endpoint refuses a history with duplicate or unanswered ids, as
 * OpenAI does, so a broken history shows up as a failed request.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { ThreadHistory } from '../../src/engine/history.js';
import { Store } from '../../src/store/store.js';
import { historyProblem, startFakeLlm, textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { TestPlatform, testDm } from '../support/test-channel.js';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

async function start(responder: (request: FakeLlmRequest, index: number) => FakeLlmEntry, dir = mkdtempSync(join(tmpdir(), 'pincer-ids-'))) {
  const llm = await startFakeLlm({ responder });
  const platform = new TestPlatform();
  const config = parseConfig({ dataDir: dir, llm: { baseUrl: llm.url, model: 'fake-model', maxRetries: 0, stream: false } });
  const app = await createApp({ config, channels: [{ name: 'test', create: (deps) => platform.createChannel(deps) }] });
  await app.start();
  cleanup = async () => {
    await app.stop('test over');
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { app, llm, platform, dir };
}

const alice = { id: 'alice', name: 'Alice' };

/** Every request's tool-call ids, for each assistant message. */
function callIds(request: FakeLlmRequest): string[][] {
  return request.messages.filter((m) => m.role === 'assistant' && Array.isArray(m.tool_calls)).map((m) => (m.tool_calls as Array<{ id: string }>).map((c) => c.id));
}

describe('tool-call ids', () => {
  it('answers after a reply whose calls share one id or have none, and again when the next reply reuses it', async () => {
    let turn = 0;
    const { app, llm, platform } = await start((request) => {
      const last = request.messages[request.messages.length - 1]!;
      if (last.role === 'user') {
        turn += 1;
        return toolCallReply([
          { id: 'call_0', name: 'time', arguments: {} },
          { id: 'call_0', name: 'calculator', arguments: { expression: '2+2' } },
          { id: '', name: 'calculator', arguments: { expression: '3*3' } },
        ]);
      }
      return textReply(`answer ${turn}`);
    });
    const chat = testDm(alice.id);
    platform.channel.userMessage({ chat, sender: alice, text: 'what time is it, and 2+2?' });
    await platform.waitFor(() => platform.messagesIn(chat).some((m) => m.text === 'answer 1'), 5000, 'the first answer');
    platform.channel.userMessage({ chat, sender: alice, text: 'and again?' });
    await platform.waitFor(() => platform.messagesIn(chat).some((m) => m.text === 'answer 2'), 5000, 'the second answer');
    await app.runtime.idle();

    const last = llm.requests[llm.requests.length - 1]!;
    expect(historyProblem(last.messages)).toBeUndefined();
    const ids = callIds(last).flat();
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
    // The model's own id is kept where it was unique.
    expect(ids[0]).toBe('call_0');
    // Each result stays with its own call: the calculator results are 4 and 9, in order.
    const results = last.messages.filter((m) => m.role === 'tool').map((m) => `${String(m.tool_call_id)}=${String(m.content)}`);
    expect(results[1]).toContain(`${ids[1]}=`);
    expect(results[1]).toContain('4');
    expect(results[2]).toContain('9');
  });

  it('repairs a stored history that already holds duplicate ids before the next model call', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pincer-ids-'));
    const chat = { ...testDm(alice.id), channel: 'test' };
    const store = await Store.open({ dataDir: dir });
    const history = new ThreadHistory(store);
    await history.update('test:dm-alice', chat, (record) => {
      record.messages.push(
        { role: 'user', content: 'first' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'x', name: 'time', arguments: '{}' }, { id: 'x', name: 'time', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'x', content: 'noon' },
        { role: 'tool', toolCallId: 'x', content: 'noon again' },
        { role: 'assistant', content: 'It is noon.' },
        { role: 'user', content: 'second' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'x', name: 'time', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'x', content: 'one' },
        { role: 'assistant', content: 'It is one.' },
      );
    });
    await history.flush();
    await store.close();
    expect(historyProblem(toWire((await reopen(dir))))).toMatch(/Duplicate/);

    const { llm, platform } = await start(() => textReply('still here'), dir);
    platform.channel.userMessage({ chat: testDm(alice.id), sender: alice, text: 'third' });
    await platform.waitFor(() => platform.messagesIn(testDm(alice.id)).some((m) => m.text === 'still here'), 5000, 'the answer');
    expect(llm.requests).toHaveLength(1);
    const ids = callIds(llm.requests[0]!).flat();
    expect(new Set(ids).size).toBe(3);
    const results = llm.requests[0]!.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(results).toEqual(['noon', 'noon again', 'one']);
  });
});

async function reopen(dir: string) {
  const store = await Store.open({ dataDir: dir });
  const record = await new ThreadHistory(store).get('test:dm-alice');
  await store.close();
  return record!.messages;
}

/** The stored history in the wire shape the fake endpoint checks. */
function toWire(messages: Awaited<ReturnType<typeof reopen>>): FakeLlmRequest['messages'] {
  return messages.map((m) => {
    if (m.role === 'assistant') return { role: 'assistant', content: m.content, tool_calls: m.toolCalls?.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) };
    if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    return { role: m.role, content: m.content };
  });
}
