/**
 * How many of Discord's gateway shards one instance should run, so that the
 * instances of a cluster share them out evenly: the rule of shard-duties.ts,
 * kept pure for its truth table.
 */

/**
 * The most shards one instance should hold: `shardCount` over the live
 * instances, rounded up (so that together they hold every shard).
 * @example
 * fairShare(4, 3); // 2
 */
export function fairShare(shardCount: number, peers: number): number {
  return Math.ceil(shardCount / Math.max(1, peers));
}

/**
 * Whether to give one shard back: more than the fair share is held, and was at
 * the previous look too. The second look gives an instance that just joined
 * (and made the share smaller) the time to start campaigning, so that the shard
 * given back is taken up at once.
 */
export function shouldGiveBack(held: number, fair: number, overAtLastLook: boolean): boolean {
  return held > fair && overAtLastLook;
}
