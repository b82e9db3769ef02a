/**
 * Channel threads the bot was addressed in. With `followThreads`, later
 * messages in such a thread count as addressed to the bot without a new
 * @mention, as people expect once they are talking with it there. Kept in
 * memory and in the channel state, so a restart does not forget them.
 */
import type { Logger } from '../../log.js';
import type { ChannelState } from '../types.js';

const TTL_MS = 30 * 24 * 60 * 60_000;
const MAX_IN_MEMORY = 10_000;

/** The set of followed threads, by channel id and thread root `ts`. */
export class FollowedThreads {
  private readonly known = new Set<string>();

  constructor(
    private readonly state: ChannelState,
    private readonly log: Logger,
  ) {}

  /** Remembers a thread (its root `ts`). */
  async follow(channel: string, threadTs: string): Promise<void> {
    const key = keyOf(channel, threadTs);
    if (this.known.has(key)) return;
    this.remember(key);
    try {
      await this.state.set(key, true, TTL_MS);
    } catch (error) {
      this.log.warn({ err: error }, 'slack: could not persist a followed thread');
    }
  }

  /** Whether the thread was followed before, in this process or an earlier one. */
  async isFollowed(channel: string, threadTs: string): Promise<boolean> {
    const key = keyOf(channel, threadTs);
    if (this.known.has(key)) return true;
    try {
      if ((await this.state.get(key)) !== true) return false;
    } catch (error) {
      this.log.warn({ err: error }, 'slack: could not read followed threads');
      return false;
    }
    this.remember(key);
    return true;
  }

  private remember(key: string): void {
    this.known.add(key);
    if (this.known.size > MAX_IN_MEMORY) this.known.delete(this.known.values().next().value!);
  }
}

function keyOf(channel: string, threadTs: string): string {
  return `slack:followed:${channel}:${threadTs}`;
}
