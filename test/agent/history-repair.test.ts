import { describe, expect, it } from 'vitest';
import { MISSING_RESULT, repairHistory } from '../../src/engine/history-repair.js';
import type { ChatMessage } from '../../src/llm/types.js';

const call = (...ids: string[]): ChatMessage => ({ role: 'assistant', content: null, toolCalls: ids.map((id) => ({ id, name: 't', arguments: '{}' })) });
const result = (id: string, content = `r${id}`): ChatMessage => ({ role: 'tool', toolCallId: id, content });
const user = (content: string): ChatMessage => ({ role: 'user', content });

describe('repairHistory', () => {
  it('returns a well-formed history unchanged (same array)', () => {
    const history = [user('a'), call('1', '2'), result('1'), result('2'), { role: 'assistant', content: 'done' } as ChatMessage];
    expect(repairHistory(history)).toBe(history);
  });

  it('fills a missing result before the next message', () => {
    expect(repairHistory([user('a'), call('1', '2'), result('1'), user('b')])).toEqual([user('a'), call('1', '2'), result('1'), result('2', MISSING_RESULT), user('b')]);
  });

  it('moves a late result up, in call order, and drops the placeholder it replaces', () => {
    const history = [call('1', '2'), result('2'), user('b'), result('1', MISSING_RESULT), result('1')];
    expect(repairHistory(history)).toEqual([call('1', '2'), result('1'), result('2'), user('b')]);
  });

  it('drops duplicate results and results of unknown calls', () => {
    expect(repairHistory([call('1'), result('1'), result('1', 'again'), result('9')])).toEqual([call('1'), result('1')]);
  });

  it('leaves a batch that is still open at the end open', () => {
    const history = [user('a'), call('1', '2'), result('1')];
    expect(repairHistory(history)).toBe(history);
  });

  it('renames calls that share an id within one reply, and their results in order', () => {
    const history = [user('a'), call('x', 'x', ''), result('x', 'first'), result('x', 'second'), result('', 'third'), user('b')];
    const repaired = repairHistory(history);
    const calls = repaired[1]!.role === 'assistant' ? repaired[1]!.toolCalls!.map((c) => c.id) : [];
    expect(new Set(calls).size).toBe(3);
    expect(calls[0]).toBe('x');
    expect(repaired.slice(2, 5)).toEqual([result(calls[0]!, 'first'), result(calls[1]!, 'second'), result(calls[2]!, 'third')]);
  });

  it('renames an id that an earlier reply already used, so each result stays with its own call', () => {
    const history = [user('a'), call('call_0'), result('call_0', 'one'), user('b'), call('call_0'), result('call_0', 'two')];
    const repaired = repairHistory(history);
    const second = repaired[4]!;
    const id = second.role === 'assistant' ? second.toolCalls![0]!.id : '';
    expect(id).not.toBe('call_0');
    expect(repaired).toEqual([user('a'), call('call_0'), result('call_0', 'one'), user('b'), call(id), result(id, 'two')]);
    // Repairing again changes nothing.
    expect(repairHistory(repaired)).toBe(repaired);
  });
});
