/**
 * Notes the model can write and search, persisted in the store: one notebook
 * per workspace, so a person's own in DMs and the conversation's in a group
 * (see `workspaces.ts`). Search ranks notes by how many of the query's words
 * they contain, newest first on ties: simple, predictable, and enough for a
 * notebook.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Store } from '../../../store/store.js';
import type { WorkspaceOwner } from './workspaces.js';

const MemoryEntrySchema = z.object({ id: z.string(), text: z.string(), at: z.number() });
const UserMemorySchema = z.object({ entries: z.array(MemoryEntrySchema) });

/** One note. */
export type MemoryEntry = z.infer<typeof MemoryEntrySchema>;

/** A note with its search score (query words it contains). */
export interface MemoryHit extends MemoryEntry {
  score: number;
}

/** Notes kept per notebook; the oldest go first. */
export const MAX_MEMORY_ENTRIES = 1000;

/** Reads and writes notebooks, each a workspace's. */
export interface MemoryStore {
  /** Saves a note; returns it and how many notes the notebook now has. */
  write(owner: WorkspaceOwner, text: string): Promise<{ entry: MemoryEntry; count: number }>;
  /** Notes matching `query`, best first; an empty query gives the newest notes. */
  search(owner: WorkspaceOwner, query: string, limit: number): Promise<MemoryHit[]>;
}

/** Creates the memory store over `store`, keeping at most `maxEntries` notes per notebook. */
export function createMemoryStore(store: Store, clock: () => number = Date.now, maxEntries = MAX_MEMORY_ENTRIES): MemoryStore {
  // A person's notebook keeps the key it always had (their user id); a group's has its own namespace.
  const people = store.namespace('memory', UserMemorySchema);
  const chats = store.namespace('chat-memory', UserMemorySchema);
  const notebook = (owner: WorkspaceOwner) => (owner.kind === 'person' ? { notes: people, key: owner.userId } : { notes: chats, key: `${owner.channel}:${owner.chatId}` });
  return {
    async write(owner, text) {
      const { notes, key } = notebook(owner);
      const entry = { id: randomUUID().slice(0, 8), text, at: clock() };
      const next = await notes.update(key, (current) => ({
        entries: [...(current?.entries ?? []), entry].slice(-maxEntries),
      }));
      return { entry, count: next?.entries.length ?? 1 };
    },
    async search(owner, query, limit) {
      const { notes, key } = notebook(owner);
      const entries = (await notes.get(key))?.entries ?? [];
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
