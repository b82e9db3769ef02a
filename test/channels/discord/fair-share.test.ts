import { describe, expect, it } from 'vitest';
import { fairShare, shouldGiveBack } from '../../../src/channels/discord/fair-share.js';

describe('the fair share of gateway shards', () => {
  it.each([
    [1, 1, 1],
    [2, 1, 2],
    [2, 2, 1],
    [2, 3, 1],
    [3, 2, 2],
    [4, 3, 2],
    [16, 5, 4],
    [1, 0, 1],
  ])('%i shards over %i instances: at most %i each', (shards, peers, share) => {
    expect(fairShare(shards, peers)).toBe(share);
  });

  it.each([
    [2, 1, true, true],
    [2, 1, false, false],
    [1, 1, true, false],
    [0, 1, true, false],
    [3, 2, true, true],
  ])('holding %i with a share of %i (over at the last look: %s): give one back = %s', (held, fair, overBefore, giveBack) => {
    expect(shouldGiveBack(held, fair, overBefore)).toBe(giveBack);
  });
});
