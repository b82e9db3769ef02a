import { describe, expect, it } from 'vitest';
import { callIdsOf, withUniqueCallIds } from '../../src/llm/call-ids.js';

const call = (id: string) => ({ id, name: 't', arguments: '{}' });

describe('withUniqueCallIds', () => {
  it('keeps unique ids and returns the same array', () => {
    const calls = [call('a'), call('b')];
    expect(withUniqueCallIds(calls)).toBe(calls);
  });

  it('gives a fresh id to an empty id, a repeat within the reply, and an id the conversation already used', () => {
    const calls = [call('a'), call('a'), call(''), call('old')];
    const ids = withUniqueCallIds(calls, new Set(['old'])).map((c) => c.id);
    expect(ids[0]).toBe('a');
    expect(new Set([...ids, 'old']).size).toBe(5);
    for (const id of ids.slice(1)) expect(id).toMatch(/^call_[\w-]{16}$/);
  });

  it('collects the ids of a conversation', () => {
    expect(callIdsOf([{ role: 'user', content: 'x' }, { role: 'assistant', content: null, toolCalls: [call('a'), call('b')] }])).toEqual(new Set(['a', 'b']));
  });
});
