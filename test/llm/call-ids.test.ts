import { describe, expect, it } from 'vitest';
import { callIdsOf, withCallIdsUniqueIn, withUniqueCallIds } from '../../src/llm/call-ids.js';

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

describe('withCallIdsUniqueIn', () => {
  const conversation = [{ role: 'user' as const, content: 'x' }, { role: 'assistant' as const, content: null, toolCalls: [call('old')] }];

  it('returns the same array when the ids are already unique', () => {
    const calls = [call('a'), call('b')];
    expect(withCallIdsUniqueIn(calls, conversation)).toBe(calls);
    const none: ReturnType<typeof call>[] = [];
    expect(withCallIdsUniqueIn(none, conversation)).toBe(none);
  });

  it('renames what withUniqueCallIds renames against the conversation', () => {
    const ids = withCallIdsUniqueIn([call('a'), call('a'), call(''), call('old')], conversation).map((c) => c.id);
    expect(ids[0]).toBe('a');
    expect(new Set([...ids, 'old']).size).toBe(5);
  });
});
