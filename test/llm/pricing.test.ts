import { describe, expect, it } from 'vitest';
import { PriceTable, costFromPrice, estimateCost } from '../../src/llm/pricing.js';

describe('PriceTable', () => {
  const table = new PriceTable({ 'gpt-4o': { input: 1, output: 1 }, 'qwen3:8b': { input: 0.1, output: 0.2 } });

  it('matches exact names, router prefixes and dated snapshots', () => {
    expect(table.priceOf('qwen3:8b')).toEqual({ input: 0.1, output: 0.2 });
    expect(table.priceOf('openai/gpt-4o-mini')?.input).toBe(0.15);
    expect(table.priceOf('gpt-4o-mini-2024-07-18')?.input).toBe(0.15);
    expect(table.priceOf('gpt-4.1-2025-04-14')?.input).toBe(2);
  });

  it('lets config prices override the built-in ones', () => {
    expect(table.priceOf('gpt-4o')).toEqual({ input: 1, output: 1 });
  });

  it('prices unknown models at 0', () => {
    expect(table.priceOf('llama3')).toBeUndefined();
    expect(table.costOf(['llama3'], { inputTokens: 1e6, outputTokens: 1e6, cachedTokens: 0 })).toBe(0);
  });

  it('uses the first model that has a price', () => {
    expect(table.costOf(['llama3', 'qwen3:8b'], { inputTokens: 1e6, outputTokens: 0, cachedTokens: 0 })).toBeCloseTo(0.1);
  });
});

describe('costFromPrice', () => {
  it('bills cached prompt tokens at the cached rate, or the input rate without one', () => {
    const usage = { inputTokens: 1_000_000, outputTokens: 500_000, cachedTokens: 400_000 };
    expect(costFromPrice({ input: 2, output: 8, cachedInput: 0.5 }, usage)).toBeCloseTo(1.2 + 0.2 + 4);
    expect(costFromPrice({ input: 2, output: 8 }, usage)).toBeCloseTo(2 + 4);
  });
});

describe('estimateCost', () => {
  const price = { input: 1, output: 10 };
  const messages = [
    { role: 'system' as const, content: 'x'.repeat(300) },
    { role: 'user' as const, content: 'y'.repeat(600) },
  ];

  it('prices the prompt at three characters a token plus eight a message, and the whole output allowance', () => {
    // (900 / 3 + 2 * 8) input tokens at $1 per million, 1,000 output tokens at $10 per million.
    expect(estimateCost(price, { messages }, 1_000)).toBeCloseTo((316 + 10_000) / 1_000_000, 12);
    expect(estimateCost(price, { messages, maxTokens: 100 }, 1_000)).toBeCloseTo((316 + 1_000) / 1_000_000, 12);
  });

  it('counts the tool definitions and the calls in the conversation', () => {
    const tools = [{ name: 'calc', description: 'adds', parameters: { type: 'object' } }];
    const withCall = [...messages, { role: 'assistant' as const, content: null, toolCalls: [{ id: 'c1', name: 'calc', arguments: '{"a":1}' }] }];
    const base = estimateCost(price, { messages }, 0);
    expect(estimateCost(price, { messages, tools }, 0)).toBeGreaterThan(base);
    expect(estimateCost(price, { messages: withCall }, 0)).toBeGreaterThan(base);
  });

  it('counts an image sent as 1,000 input tokens, whatever the length of its data URL, and a reference without bytes as nothing', () => {
    const image = { path: 'attachments/a.jpg', mimeType: 'image/jpeg', turn: 1 };
    const sent = [messages[0]!, { ...messages[1]!, images: [{ ...image, dataUrl: `data:image/jpeg;base64,${'A'.repeat(300_000)}` }] }];
    const kept = [messages[0]!, { ...messages[1]!, images: [image] }];
    expect(estimateCost(price, { messages: sent }, 0)).toBeCloseTo((316 + 1_000) / 1_000_000, 12);
    expect(estimateCost(price, { messages: kept }, 0)).toBeCloseTo(316 / 1_000_000, 12);
  });

  it('is 0 for a model without a price', () => {
    expect(estimateCost(undefined, { messages }, 1_000)).toBe(0);
  });
});
