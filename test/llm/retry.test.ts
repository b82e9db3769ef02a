import { describe, expect, it } from 'vitest';
import { LlmError } from '../../src/errors.js';
import { parseRetryAfter } from '../../src/llm/errors.js';
import { backoffDelay, sleep, withRetries } from '../../src/llm/retry.js';

const policy = { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 1000 };
const transient = () => new LlmError('busy', 'server', true, 503);

describe('backoffDelay', () => {
  it('doubles the ceiling per retry, caps it and jitters below it', () => {
    expect([0, 1, 2, 3, 4, 5].map((index) => backoffDelay(index, policy, () => 0.999))).toEqual([99, 199, 399, 799, 999, 999]);
    expect(backoffDelay(3, policy, () => 0)).toBe(0);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  it('reads seconds, milliseconds and HTTP dates', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(parseRetryAfter(new Headers({ 'retry-after': '0.5' }), now)).toBe(500);
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(250);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Tue, 01 Jan 2030 00:00:03 GMT' }), now)).toBe(3000);
  });
  it('ignores missing or unreadable values', () => {
    expect(parseRetryAfter(new Headers(), now)).toBeUndefined();
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
  });
});

describe('withRetries', () => {
  it('retries retryable errors until success', async () => {
    let calls = 0;
    const delays: number[] = [];
    const result = await withRetries(
      async () => {
        calls += 1;
        if (calls < 3) throw transient();
        return 'ok';
      },
      { ...policy, baseDelayMs: 1, random: () => 0.5, onRetry: (notice) => delays.push(notice.retry) },
    );
    expect(result).toBe('ok');
    expect(calls).toBe(3);
    expect(delays).toEqual([1, 2]);
  });

  it('stops at maxRetries and rethrows the last error', async () => {
    let calls = 0;
    const failing = withRetries(
      async () => {
        calls += 1;
        throw transient();
      },
      { ...policy, baseDelayMs: 1, maxRetries: 2 },
    );
    await expect(failing).rejects.toMatchObject({ kind: 'server' });
    expect(calls).toBe(3);
  });

  it('never retries errors that are not retryable, or vetoed ones', async () => {
    let calls = 0;
    const fatal = withRetries(async () => {
      calls += 1;
      throw new LlmError('no', 'auth', false, 401);
    }, policy);
    await expect(fatal).rejects.toMatchObject({ kind: 'auth' });
    const vetoed = withRetries(async () => {
      calls += 1;
      throw transient();
    }, { ...policy, canRetry: () => false });
    await expect(vetoed).rejects.toMatchObject({ kind: 'server' });
    expect(calls).toBe(2);
  });
});

describe('sleep', () => {
  it('rejects with an aborted LlmError when the signal fires', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const started = Date.now();
    await expect(sleep(5000, controller.signal)).rejects.toMatchObject({ kind: 'aborted', retryable: false });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
