/**
 * Remembers which updates were handled, so that an update Telegram delivers
 * again (after a restart, a lost confirmation, a webhook retry) is not answered
 * twice. The highest handled update_id is persisted per bot through the
 * channel state; recent ids are also kept in memory, because webhook delivery
 * may bring them out of order.
 */
import type { Logger } from '../../log.js';
import type { ChannelState } from '../types.js';

/** How many recent update ids are remembered in memory. */
const RECENT_LIMIT = 1000;

/** The handled-update record of one bot. */
export class UpdateLedger {
  /** The mark read at start: every id at or below it was handled by an earlier run. */
  private loaded = 0;
  private persisted = 0;
  private highest = 0;
  private readonly recent = new Set<number>();
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly state: ChannelState,
    private readonly botId: number,
    private readonly log: Logger,
  ) {}

  private get key(): string {
    return `lastUpdateId:${this.botId}`;
  }

  /**
   * Reads the persisted high-water mark; everything at or below it counts as
   * handled. Read again when another instance may have advanced it (a new
   * term of the polling duty); it never moves the mark back.
   */
  async load(): Promise<void> {
    const stored = await this.state.get(this.key);
    if (typeof stored !== 'number' || !Number.isSafeInteger(stored)) return;
    this.loaded = Math.max(this.loaded, stored);
    this.persisted = Math.max(this.persisted, stored);
    this.highest = Math.max(this.highest, stored);
  }

  /** The getUpdates offset that confirms every handled update, if any was. */
  get nextOffset(): number | undefined {
    return this.highest > 0 ? this.highest + 1 : undefined;
  }

  /** Marks `updateId` handled; false when it already was (a duplicate to skip). */
  claim(updateId: number): boolean {
    const floor = Math.max(this.loaded, this.highest - RECENT_LIMIT);
    if (updateId <= floor || this.recent.has(updateId)) return false;
    this.recent.add(updateId);
    if (this.recent.size > RECENT_LIMIT) this.recent.delete(this.recent.values().next().value!);
    this.highest = Math.max(this.highest, updateId);
    return true;
  }

  /** Persists the high-water mark; writes are serialised and failures only logged. */
  save(): Promise<void> {
    this.saving = this.saving.then(async () => {
      const highest = this.highest;
      if (highest <= this.persisted) return;
      try {
        await this.state.set(this.key, highest);
        this.persisted = highest;
      } catch (error) {
        this.log.warn({ error: error instanceof Error ? error.message : String(error) }, 'telegram: could not persist the last update id');
      }
    });
    return this.saving;
  }
}
