/**
 * Per-user notes the model can write and search, persisted in the store. Search
 * ranks notes by how many of the query's words they contain, newest first on
 * ties: simple, predictable, and enough for a personal notebook.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Store } from '../../../store/store.js';

const MemoryEntrySchema = z.object({ id: z.string(), text: z.string(), at: z.number() });
const UserMemorySchema = z.object({ entries: z.array(MemoryEntrySchema) });

/** One note. */
export type MemoryEntry = z.infer<typeof MemoryEntrySchema>;

/** A note with its search score (query words it contains). */
export interface MemoryHit extends MemoryEntry {
  score: number;
}

/** Notes kept per user; the oldest go first. */
export const MAX_MEMORY_ENTRIES = 1000;

/** Reads and writes users' notes. */
export interface MemoryStore {
  /** Saves a note; returns it and how many notes the user now has. */
  write(userId: string, text: string): Promise<{ entry: MemoryEntry; count: number }>;
  /** Notes matching `query`, best first; an empty query gives the newest notes. */
  search(userId: string, query: string, limit: number): Promise<MemoryHit[]>;
}

/** Creates the memory store over `store`, keeping at most `maxEntries` notes per user. */
export function createMemoryStore(store: Store, clock: () => number = Date.now, maxEntries = MAX_MEMORY_ENTRIES): MemoryStore {
  const notes = store.namespace('memory', UserMemorySchema);
  return {
    async write(userId, text) {
      const entry = { id: randomUUID().slice(0, 8), text, at: clock() };
      const next = await notes.update(userId, (current) => ({
        entries: [...(current?.entries ?? []), entry].slice(-maxEntries),
      }));
      return { entry, count: next?.entries.length ?? 1 };
    },
    async search(userId, query, limit) {
      const entries = (await notes.get(userId))?.entries ?? [];
      return rank(entries, query).slice(0, limit);
    },
  };
}

/** Scores every entry by query-word overlap; drops entries that share no word unless the query is empty. */
export function rank(entries: readonly MemoryEntry[], query: string): MemoryHit[] {
  const terms = new Set(words(query));
  const scored = entries.map((entry) => ({ ...entry, score: overlap(terms, entry.text) }));
  const kept = terms.size === 0 ? scored : scored.filter((hit) => hit.score > 0);
  return kept.sort((a, b) => b.score - a.score || b.at - a.at);
}

function overlap(terms: Set<string>, text: string): number {
  if (terms.size === 0) return 0;
  const present = new Set(words(text));
  let score = 0;
  for (const term of terms) if (present.has(term)) score++;
  return score;
}

function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1 || /\p{N}/u.test(w));
}
