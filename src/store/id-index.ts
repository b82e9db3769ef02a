/**
 * Lists of record ids under a key (one person's jobs, one scope's routines,
 * all of them), so that a listing reads its list and those records, not every
 * record in the store.
 *
 * An id is listed before its record is written: a crash in between leaves an
 * id without a record, which readers skip and which is dropped once it is
 * older than {@link RECORD_GRACE_MS}, never a record that no list finds. Each
 * entry says when it was listed and, for records that end (jobs), when the
 * record ended, so that counting the open ones reads no record.
 */
import { z } from 'zod';
import type { Namespace, Store } from './store.js';

/** One listed id. */
export const IndexEntrySchema = z.object({
  id: z.string(),
  /** When it was listed (ms). */
  at: z.number(),
  /** When its record ended (a finished job), if it did. */
  ended: z.number().optional(),
});
export type IndexEntry = z.infer<typeof IndexEntrySchema>;

/** How long a listed id may wait for its record before it is taken for the trace of a crash. */
export const RECORD_GRACE_MS = 60_000;

/** A listed id and its record, when there is one. */
export interface Listed<T> {
  entry: IndexEntry;
  record: T | undefined;
}

/** Id lists in one store namespace. */
export class IdIndex {
  private readonly lists: Namespace<IndexEntry[]>;

  constructor(
    store: Store,
    name: string,
    private readonly now: () => number = Date.now,
  ) {
    this.lists = store.namespace(name, z.array(IndexEntrySchema), 1);
  }

  /** The entries under `key`, oldest first. */
  async entries(key: string): Promise<IndexEntry[]> {
    return (await this.lists.get(key)) ?? [];
  }

  /**
   * Lists `id` under `key` (once), unless `refuse`, given the current entries,
   * returns a reason: then nothing changes and the reason is returned. The check
   * and the write are one atomic update of the list.
   */
  async add(key: string, id: string, refuse?: (entries: IndexEntry[]) => string | undefined, at = this.now()): Promise<string | undefined> {
    let refusal: string | undefined;
    await this.lists.update(key, (current) => {
      const entries = current ?? [];
      // Under compare-and-set the change may run again on a newer list: only the last run counts.
      refusal = entries.some((entry) => entry.id === id) ? undefined : refuse?.(entries);
      if (refusal || entries.some((entry) => entry.id === id)) return current;
      return [...entries, { id, at }];
    });
    return refusal;
  }

  /** Lists older `entries` under `key`, ahead of those it has; ids it has already stay as they are. */
  async merge(key: string, entries: readonly IndexEntry[]): Promise<void> {
    await this.lists.update(key, (current) => {
      const known = new Set((current ?? []).map((entry) => entry.id));
      return [...entries.filter((entry) => !known.has(entry.id)), ...(current ?? [])];
    });
  }

  /** Unlists `ids` under `key`. */
  async remove(key: string, ids: Iterable<string>): Promise<void> {
    const drop = new Set(ids);
    if (!drop.size) return;
    await this.lists.update(key, (current) => {
      if (!current) return current;
      const kept = current.filter((entry) => !drop.has(entry.id));
      return kept.length ? kept : undefined;
    });
  }

  /** Marks `ids` as ended at the given times, then keeps only the newest `keepEnded` ended entries. */
  async end(key: string, ended: ReadonlyMap<string, number>, keepEnded: number): Promise<void> {
    if (!ended.size) return;
    await this.lists.update(key, (current) => {
      if (!current) return current;
      const marked = current.map((entry) => (ended.has(entry.id) && entry.ended === undefined ? { ...entry, ended: ended.get(entry.id)! } : entry));
      const endedIds = marked.filter((entry) => entry.ended !== undefined).map((entry) => entry.id);
      const drop = new Set(endedIds.slice(0, Math.max(0, endedIds.length - keepEnded)));
      return marked.filter((entry) => !drop.has(entry.id));
    });
  }

  /**
   * The entries under `key` that `pick` selects, oldest first, each with its
   * record read by `read` (undefined when it has none). Entries past the grace
   * period whose record is missing (it never came, or it expired) are unlisted
   * on the way.
   */
  async read<T>(key: string, read: (id: string) => Promise<T | undefined>, pick: (entry: IndexEntry) => boolean = () => true): Promise<Listed<T>[]> {
    const picked = (await this.entries(key)).filter(pick);
    const records = await Promise.all(picked.map((entry) => read(entry.id)));
    const listed = picked.map((entry, i) => ({ entry, record: records[i] }));
    const cutoff = this.now() - RECORD_GRACE_MS;
    await this.remove(key, listed.filter((item) => !item.record && item.entry.at < cutoff).map((item) => item.entry.id));
    return listed;
  }
}

/**
 * The single list of every id that earlier versions kept under `all`: adopted
 * once into an {@link IdIndex}, each record listed under the keys it belongs
 * to, then deleted. A failed adoption is tried again on the next call.
 */
export class LegacyIdList {
  private readonly list: Namespace<string[]>;
  private adopted: Promise<number> | undefined;

  constructor(store: Store, name: string) {
    this.list = store.namespace(name, z.array(z.string()), 1);
  }

  /** Adopts the old list into `index` (once per process); resolves with how many ids it held. */
  adoptOnce<T>(index: IdIndex, read: (id: string) => Promise<T | undefined>, place: (record: T, id: string) => { keys: string[]; entry: IndexEntry }): Promise<number> {
    this.adopted ??= this.adopt(index, read, place).catch((error: unknown) => {
      this.adopted = undefined;
      throw error;
    });
    return this.adopted;
  }

  private async adopt<T>(index: IdIndex, read: (id: string) => Promise<T | undefined>, place: (record: T, id: string) => { keys: string[]; entry: IndexEntry }): Promise<number> {
    const ids = await this.list.get('all');
    if (!ids) return 0;
    const byKey = new Map<string, IndexEntry[]>();
    for (const id of ids) {
      const record = await read(id);
      if (record === undefined) continue;
      const { keys, entry } = place(record, id);
      for (const key of keys) byKey.set(key, [...(byKey.get(key) ?? []), entry]);
    }
    for (const [key, entries] of byKey) await index.merge(key, entries);
    await this.list.delete('all');
    return ids.length;
  }
}
