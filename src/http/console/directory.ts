/**
 * The conversations the console lists: every thread that ran a turn since the
 * console was on, with its chat and when it was last active, kept in the store
 * (one list, shared by the instances) and fed by the agent's `turn.ended`
 * events. The thread's own record stays the source of its messages and cost.
 */
import { z } from 'zod';
import { ChatRecordSchema } from '../../engine/thread-record.js';
import type { AgentEvents } from '../../engine/events.js';
import type { ThreadHistory } from '../../engine/history.js';
import type { Logger } from '../../log.js';
import type { Namespace, Store } from '../../store/store.js';

/** How many conversations the directory remembers (the least recently active leave first). */
export const DIRECTORY_SIZE = 500;

const EntrySchema = z.object({ key: z.string(), chat: ChatRecordSchema, lastAt: z.number() });
/** One listed conversation. */
export type DirectoryEntry = z.infer<typeof EntrySchema>;

/** The list of conversations; see the module comment. */
export class ConversationDirectory {
  private readonly list: Namespace<DirectoryEntry[]>;

  constructor(store: Store) {
    this.list = store.namespace('console-conversations', z.array(EntrySchema));
  }

  /** Every listed conversation, the most recently active first. */
  async entries(): Promise<DirectoryEntry[]> {
    return [...((await this.list.get('all')) ?? [])].sort((a, b) => b.lastAt - a.lastAt);
  }

  /** Lists (or moves up) a conversation. */
  async note(entry: DirectoryEntry): Promise<void> {
    await this.list.update('all', (current) => {
      const others = (current ?? []).filter((known) => known.key !== entry.key);
      return [entry, ...others].sort((a, b) => b.lastAt - a.lastAt).slice(0, DIRECTORY_SIZE);
    });
  }

  /** Notes every thread whose turn ends; returns the unsubscribe function. */
  follow(events: AgentEvents, history: ThreadHistory, log: Logger): () => void {
    return events.on('turn.ended', (ended) => {
      void (async () => {
        const record = await history.get(ended.thread);
        if (record) await this.note({ key: ended.thread, chat: record.chat, lastAt: Date.now() });
      })().catch((error: unknown) => log.warn({ err: error }, 'console: conversation not listed'));
    });
  }
}
