/**
 * Sign-in links shared by several instances on one Redis store: a link made
 * by one is used once, whichever instances its presses reach, and the store
 * holds no usable token.
 */
import { describe, expect, it } from 'vitest';
import { SignInLinks, tokenKey } from '../../../src/http/console/sign-in-links.js';
import { Store } from '../../../src/store/store.js';

const url = process.env.PINCER_TEST_REDIS_URL;

describe.skipIf(!url)(`sign-in links on Redis${url ? '' : ' (skipped: PINCER_TEST_REDIS_URL is not set)'}`, () => {
  it('signs in once when two instances get the same link at the same time', async () => {
    const [a, b] = await Promise.all([Store.open({ url: url! }), Store.open({ url: url! })]);
    try {
      const token = await new SignInLinks(a).issue({ userId: 'test:owner', name: 'Owner' });
      const results = await Promise.all([new SignInLinks(a).redeem(token), new SignInLinks(b).redeem(token), new SignInLinks(b).redeem(token)]);
      expect(results.filter((result) => result.ok)).toHaveLength(1);
      const raw = (await (a.redis!.command.keys('*'))).join('\n');
      expect(raw).not.toContain(token);
      expect(tokenKey(token)).not.toBe(token);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
