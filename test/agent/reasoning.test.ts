import { describe, expect, it } from 'vitest';
import { EMPTY_REPLY_FALLBACK, cleanReply, cleanResponse, finalizeReply, recoverToolCalls } from '../../src/engine/reasoning.js';
import type { LlmResponse } from '../../src/llm/types.js';

const TOOLS = ['search', 'read_file', 'append_file'];

function reply(content: string, extra: Partial<LlmResponse> = {}): LlmResponse {
  return {
    content,
    toolCalls: [],
    finishReason: 'stop',
    usage: { inputTokens: 1, outputTokens: 1, cachedTokens: 0 },
    costUsd: 0,
    model: 'm',
    ...extra,
  };
}

function onlyCall(text: string) {
  const { calls, remainingText } = recoverToolCalls(text, TOOLS);
  expect(calls).toHaveLength(1);
  return { call: calls[0]!, args: JSON.parse(calls[0]!.arguments) as unknown, remainingText };
}

describe('cleanReply: reasoning', () => {
  it.each([
    ['a closed block', '<think>The user wants a greeting.</think>Hello!', 'Hello!'],
    ['a thinking block with newlines', '<thinking>\nstep 1\nstep 2\n</thinking>\n\nThe answer is 4.', 'The answer is 4.'],
    ['a reasoning block', '<reasoning>because</reasoning>Yes.', 'Yes.'],
    ['tags with whitespace and case', '< THINK >\n hmm \n</ think >Sure.', 'Sure.'],
    ['tags with attributes', '<think type="internal">x</think>Done.', 'Done.'],
    ['pipe tokens', '<|thinking|>plan<|/thinking|>Visible.', 'Visible.'],
    ['begin/end pipe tokens', '<|begin_of_thought|>plan<|end_of_thought|>Visible.', 'Visible.'],
    ['a nested block', '<think>outer <think>inner</think> still outer</think>Final.', 'Final.'],
    ['two blocks', '<think>a</think>One. <think>b</think>Two.', 'One. Two.'],
    ['a leading block whose opening tag is missing', 'the user asks about X, so...</think>\n\nX is a letter.', 'X is a letter.'],
    ['an unclosed block at the end', 'Here is the plan.\n\n<think>now I should also consider', 'Here is the plan.'],
    ['a block between paragraphs', 'First.\n\n<think>x</think>\n\nSecond.', 'First.\n\nSecond.'],
  ])('strips %s', (_name, input, expected) => {
    expect(cleanReply(input)).toBe(expected);
  });

  it('returns an empty string when only reasoning was written', () => {
    expect(cleanReply('<think>\n\nonly thoughts\n</think>\n')).toBe('');
    expect(cleanReply('<think>cut off while thinking')).toBe('');
  });

  it('leaves tags inside code alone', () => {
    const inline = 'Wrap reasoning in `<think>` tags.';
    const fenced = 'Example:\n```xml\n<think>private</think>\n<tool_call>\n```\nThat is all.';
    expect(cleanReply(inline)).toBe(inline);
    expect(cleanReply(fenced)).toBe(fenced);
  });

  it('does not touch words that only look like tags', () => {
    expect(cleanReply('I <3 <thinker> tags and a < b > c.')).toBe('I <3 <thinker> tags and a < b > c.');
  });
});

describe('cleanReply: tool markup', () => {
  it.each([
    ['a whole tool_call block', 'Sure.\n<tool_call>{"name":"x","arguments":{}}</tool_call>\nDone.', 'Sure.\n\nDone.'],
    ['an unclosed tool_call and what follows', 'Checking now. <tool_call>{"name":"x", "argu', 'Checking now.'],
    ['stray closing tags', 'All done.</tool_call>', 'All done.'],
    ['a function tag block', 'Ok <function=append_file>{"a":1}</function> after', 'Ok after'],
    ['special tokens', 'Hi <|tool_call|>{"name":"x"}<|/tool_call|> there', 'Hi there'],
    ['DeepSeek full-width tokens', 'Hi <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>x\n{}<｜tool▁call▁end｜><｜tool▁calls▁end｜> bye', 'Hi bye'],
    ['a Mistral call list', 'Let me look. [TOOL_CALLS] [{"name":"search","arguments":{}}]', 'Let me look.'],
    ['Qwen3-coder style markup', '<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>\nAfter.', 'After.'],
  ])('removes %s', (_name, input, expected) => {
    expect(cleanReply(input)).toBe(expected);
  });
});

describe('recoverToolCalls', () => {
  it('recovers <tool_call> JSON with arguments', () => {
    const { call, args, remainingText } = onlyCall('On it.\n<tool_call>\n{"name": "search", "arguments": {"query": "pincer"}}\n</tool_call>');
    expect(call.name).toBe('search');
    expect(call.id).toMatch(/^recovered_\d+$/);
    expect(args).toEqual({ query: 'pincer' });
    expect(remainingText).toBe('On it.');
  });

  it('recovers <tool_call> JSON with parameters, and an unclosed tag', () => {
    expect(onlyCall('<tool_call>{"name":"read_file","parameters":{"path":"a.txt"}}').args).toEqual({ path: 'a.txt' });
  });

  it('recovers several calls with distinct ids, in order', () => {
    const text = '<tool_call>{"name":"search","arguments":{"query":"a"}}</tool_call>\n<tool_call>{"name":"read_file","arguments":{"path":"b"}}</tool_call>';
    const { calls, remainingText } = recoverToolCalls(text, TOOLS);
    expect(calls.map((call) => call.name)).toEqual(['search', 'read_file']);
    expect(new Set(calls.map((call) => call.id)).size).toBe(2);
    expect(remainingText).toBe('');
  });

  it('keeps arguments the model already wrote as JSON text', () => {
    const { call } = onlyCall('<tool_call>{"name":"search","arguments":"{\\"query\\":\\"x\\"}"}</tool_call>');
    expect(call.arguments).toBe('{"query":"x"}');
  });

  it('recovers <function=name> with JSON and with parameter tags', () => {
    expect(onlyCall('<function=read_file>{"path": "notes.md"}</function>').args).toEqual({ path: 'notes.md' });
    const tagged = onlyCall('<tool_call>\n<function=search>\n<parameter=query>\ncats and dogs\n</parameter>\n<parameter=limit>\n3\n</parameter>\n</function>\n</tool_call>');
    expect(tagged.call.name).toBe('search');
    expect(tagged.args).toEqual({ query: 'cats and dogs', limit: 3 });
    expect(tagged.remainingText).toBe('');
  });

  it('recovers a fenced json block of exactly {name, arguments}', () => {
    const { call, args, remainingText } = onlyCall('I will search.\n```json\n{"name": "search", "arguments": {"query": "weather"}}\n```');
    expect(call.name).toBe('search');
    expect(args).toEqual({ query: 'weather' });
    expect(remainingText).toBe('I will search.');
  });

  it('leaves fenced JSON of any other shape alone', () => {
    const text = 'Example config:\n```json\n{"name": "search", "arguments": {}, "enabled": true}\n```';
    expect(recoverToolCalls(text, TOOLS)).toEqual({ calls: [], remainingText: text });
  });

  it('recovers a reply that is nothing but the call object', () => {
    expect(onlyCall('{"name": "search", "parameters": {"query": "x"}}').args).toEqual({ query: 'x' });
  });

  it('recovers Mistral [TOOL_CALLS] lists and named calls', () => {
    const { calls } = recoverToolCalls('[TOOL_CALLS] [{"name": "search", "arguments": {"query": "a"}}, {"name": "read_file", "arguments": {"path": "b"}}]', TOOLS);
    expect(calls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([
      ['search', { query: 'a' }],
      ['read_file', { path: 'b' }],
    ]);
    expect(onlyCall('[TOOL_CALLS]search[ARGS]{"query": "b"}').args).toEqual({ query: 'b' });
  });

  it.each([
    ['<tool_call>', '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>'],
    ['<function=...>', '<function=rm_rf>{"path": "/"}</function>'],
    ['fenced json', '```json\n{"name": "launch", "arguments": {}}\n```'],
    ['Mistral', '[TOOL_CALLS] [{"name": "search", "arguments": {}}, {"name": "hack", "arguments": {}}]'],
    ['bare JSON', '{"name": "unknown_tool", "arguments": {}}'],
  ])('leaves the text alone when a %s call names an unknown tool', (_variant, text) => {
    expect(recoverToolCalls(text, TOOLS)).toEqual({ calls: [], remainingText: text });
  });

  it('ignores call markup inside inline code and broken JSON', () => {
    const inline = 'Models sometimes write `<tool_call>{"name":"search","arguments":{}}</tool_call>` as text.';
    expect(recoverToolCalls(inline, TOOLS).calls).toEqual([]);
    expect(recoverToolCalls('<tool_call>{"name": "search", "arguments": {"query": </tool_call>', TOOLS).calls).toEqual([]);
  });
});

describe('finalizeReply', () => {
  it('cleans a text reply and reports no anomaly', () => {
    const result = finalizeReply(reply('<think>hm</think>The capital is Paris.'), TOOLS);
    expect(result).toEqual({ response: reply('The capital is Paris.') });
  });

  it('turns a reply empty after cleaning into the fallback, flagged', () => {
    for (const content of ['', '   ', '<think>only thinking</think>', '<tool_call>{"name":"nope","arguments":{}}</tool_call>']) {
      const result = finalizeReply(reply(content), TOOLS);
      expect(result.anomaly).toBe('empty_reply');
      expect(result.response.content).toBe(EMPTY_REPLY_FALLBACK);
    }
  });

  it('merges recovered calls into the response as tool calls', () => {
    const result = finalizeReply(reply('<think>use search</think>Searching.\n<tool_call>{"name":"search","arguments":{"query":"q"}}</tool_call>'), TOOLS);
    expect(result.anomaly).toBeUndefined();
    expect(result.response.finishReason).toBe('tool_calls');
    expect(result.response.content).toBe('Searching.');
    expect(result.response.toolCalls).toEqual([{ id: expect.stringMatching(/^recovered_\d+$/), name: 'search', arguments: '{"query":"q"}' }]);
  });

  it('does not recover calls the model only considered while reasoning', () => {
    const result = finalizeReply(reply('<think><tool_call>{"name":"search","arguments":{}}</tool_call></think>No search needed: 4.'), TOOLS);
    expect(result.response.toolCalls).toEqual([]);
    expect(result.response.content).toBe('No search needed: 4.');
  });

  it('keeps structured tool calls and cleans their narration, even when empty', () => {
    const calls = [{ id: 'call_1', name: 'search', arguments: '{}' }];
    const result = finalizeReply(reply('<think>x</think>', { toolCalls: calls, finishReason: 'tool_calls' }), TOOLS);
    expect(result).toEqual({ response: reply('', { toolCalls: calls, finishReason: 'tool_calls' }) });
  });
});

describe('cleanResponse', () => {
  it('removes reasoning and tool markup but keeps the edges a continuation may need', () => {
    expect(cleanResponse(reply('<think>go on</think>the first half of a ', { finishReason: 'length' }), TOOLS).content).toBe('the first half of a ');
    expect(cleanResponse(reply(' sentence.'), TOOLS).content).toBe(' sentence.');
  });

  it('makes calls written as text for an offered tool real calls, and leaves others as they were cleaned', () => {
    const text = 'Searching.\n<tool_call>{"name":"search","arguments":{"query":"q"}}</tool_call>';
    const offered = cleanResponse(reply(text), TOOLS);
    expect(offered.finishReason).toBe('tool_calls');
    expect(offered.toolCalls.map((call) => call.name)).toEqual(['search']);
    expect(offered.content).toBe('Searching.');
    const none = cleanResponse(reply(text), []);
    expect(none.toolCalls).toEqual([]);
    expect(none.content.trim()).toBe('Searching.');
  });

  it('is what finalizeReply then leaves alone, but for trimming', () => {
    const raw = reply('<think>hm</think> The capital is Paris. ');
    expect(finalizeReply(cleanResponse(raw, TOOLS), TOOLS)).toEqual(finalizeReply(raw, TOOLS));
  });
});
