import { describe, expect, it } from 'vitest';
import { MISSING_RESULT, repairHistory } from '../../src/agent/history-repair.js';
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
});
