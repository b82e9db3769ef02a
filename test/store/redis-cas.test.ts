/**
 * Store.update on Redis is atomic across instances: two stores on the same
 * server (as two processes would have) change one record concurrently and no
 * change is lost.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Store } from '../../src/store/store.js';

const url = process.env.PINCER_TEST_REDIS_URL;

describe.skipIf(!url)(`Store.update across instances on Redis${url ? '' : ' (skipped: PINCER_TEST_REDIS_URL is not set)'}`, () => {
  it('keeps every one of 2 x 100 concurrent increments of one record', async () => {
    const [a, b] = await Promise.all([Store.open({ url: url! }), Store.open({ url: url! })]);
    const name = `counter-${process.pid}-${Date.now()}`;
    const counters = [a, b].map((store) => store.namespace(name, z.object({ n: z.number(), by: z.array(z.string()) })));
    const increments = counters.flatMap((counter, i) =>
      Array.from({ length: 100 }, (_, j) => counter.update('shared', (current) => ({ n: (current?.n ?? 0) + 1, by: [...(current?.by ?? []), `${i}:${j}`] }))),
    );
    await Promise.all(increments);
    const stored = await counters[0]!.get('shared');
    expect(stored?.n).toBe(200);
    expect(new Set(stored?.by).size).toBe(200);
    await counters[0]!.delete('shared');
    await Promise.all([a.close(), b.close()]);
  });

  it('deletes a record when the change returns undefined, and answers undefined', async () => {
    const store = await Store.open({ url: url! });
    const items = store.namespace(`gone-${process.pid}-${Date.now()}`, z.object({ n: z.number() }));
    await items.set('x', { n: 1 });
    expect(await items.update('x', () => undefined)).toBeUndefined();
    expect(await items.get('x')).toBeUndefined();
    await store.close();
  });
});
