/**
 * Persisted conversation threads: the history the model sees, recent group
 * context, and usage. One record per thread key, validated on read; each write
 * hands the storage what changed since the last one (see thread-storage.ts).
 */
import type { ChatInfo } from '../channels/types.js';
import type { ChatMessage } from '../llm/types.js';
import { KeyedMutex } from '../store/mutex.js';
import type { Store } from '../store/store.js';
import { silentLogger, type Logger } from '../log.js';
import { KeyvThreadStorage } from './thread-log.js';
import {
  ChatMessageSchema,
  ChatRecordSchema,
  GroupLineSchema,
  OpenTurnSchema,
  QueuedMessageSchema,
  ThreadRecordSchema,
  ToolCallSchema,
  UsageTotalsSchema,
  zeroUsage,
  type GroupLine,
  type OpenTurn,
  type QueuedMessage,
  type ThreadRecord,
  type UsageTotals,
} from './thread-record.js';
import type { ThreadDelta, ThreadStorage } from './thread-storage.js';

// The record's schemas and types live in thread-record.ts (the storages read them without the history); they are
// re-exported here for the code that reads threads through the history.
export { ChatMessageSchema, ChatRecordSchema, GroupLineSchema, OpenTurnSchema, QueuedMessageSchema, ThreadRecordSchema, ToolCallSchema, UsageTotalsSchema, zeroUsage };
export type { GroupLine, OpenTurn, QueuedMessage, ThreadRecord, UsageTotals };

/** Thread records kept in memory (the most recently used ones), at most this many... */
const CACHE_SIZE = 2_000;
/**
 * ...and at most about this many bytes of them, as {@link recordBytes} estimates them: a count
 * alone lets 2,000 long histories (hundreds of KB each until compaction shortens them) take
 * hundreds of MB. 48 MB holds about 110,000 short messages: 2,000 threads of 55, or 200 of 550.
 * The record in use is kept even when it alone is larger.
 */
export const THREAD_CACHE_BYTES = 48 * 2 ** 20;
/**
 * What a message (a group line, an inbox message) costs in memory besides its text. Measured in
 * the heap snapshots of bench/soak: about 180 bytes for a message with its tool calls and its
 * slot in the history, and 260 for the redacted wire form the provider keeps while the message
 * lives (llm/sent-messages.ts).
 */
const ENTRY_BYTES = 440;

/** What the store holds of a thread, as this process last wrote or read it. */
interface Written {
  /** The messages, as the very objects written: a message in the history is replaced, never changed in place. */
  messages: readonly ChatMessage[];
  /** Ids of the inbox's messages. */
  inbox: ReadonlySet<string>;
}

/**
 * Reads and writes thread records. A record read once stays in memory while its
 * thread is active, and every change goes through {@link update} (or {@link
 * save}, for the fields a turn owns) on that one object, one change at a time
 * per thread: a group message kept as context while a turn runs is not lost when
 * the turn saves.
 */
export class ThreadHistory {
  private readonly cache = new Map<string, ThreadRecord>();
  /** Per cached thread, its estimated size when last read or changed, and their sum. */
  private readonly sizes = new Map<string, number>();
  private cachedBytes = 0;
  /** Per cached thread, what its next write is compared with. */
  private readonly written = new Map<string, Written>();
  private readonly mutex = new KeyedMutex();
  /** The last write of each thread still in flight; writes of one thread go out in order. */
  private readonly writes = new Map<string, Promise<void>>();
  /** Writes queued behind another and not started yet, with the record they will write: a later change joins them. */
  private readonly queued = new Map<string, { write: Promise<void>; record: ThreadRecord }>();

  constructor(
    store: Store,
    private readonly log: Logger = silentLogger,
    private readonly storage: ThreadStorage = new KeyvThreadStorage(store, log),
  ) {}

  /**
   * The thread's record (a fresh one for a chat never seen). The object is
   * shared: a turn changes `messages`, `usage`, `turns` and `lastIteration` on
   * it and then calls {@link save}.
   */
  load(key: string, chat: ChatInfo): Promise<ThreadRecord> {
    return this.mutex.run(key, async () => {
      const record = await this.read(key, chat);
      Object.assign(record.chat, chatFields(chat));
      return record;
    });
  }

  /** The thread's record if it exists. */
  async get(key: string): Promise<ThreadRecord | undefined> {
    return this.cache.get(key) ?? (await this.storage.read(key));
  }

  /**
   * Drops the thread from memory, so that its next read comes from the store:
   * for a thread another process may have written meanwhile. A write of this
   * one already queued still goes out.
   */
  forget(key: string): void {
    this.uncache(key);
    this.written.delete(key);
  }

  /**
   * Writes the fields a turn owns; context kept meanwhile by {@link update}
   * stays. `consumed` names inbox messages the turn has read (they are in its
   * messages now), which leave the inbox in the same write.
   */
  save(record: ThreadRecord, options: { wait?: boolean; consumed?: readonly string[] } = {}): Promise<ThreadRecord> {
    return this.update(
      record.key,
      record.chat,
      (current) => {
        if (options.consumed?.length) {
          const read = new Set(options.consumed);
          current.inbox = current.inbox.filter((queued) => !read.has(queued.id));
        }
        if (current === record) return;
        current.messages = record.messages;
        current.usage = record.usage;
        current.turns = record.turns;
        if (record.turnId) current.turnId = record.turnId;
        current.lastIteration = record.lastIteration;
        if (record.turn) current.turn = record.turn;
        else delete current.turn;
      },
      options,
    );
  }

  /**
   * Changes one record and writes it, after any earlier change of the same
   * thread. With `wait: false` it resolves once the change is made in memory and
   * the write goes on in the background (still in order), keeping the store off
   * a turn's critical path.
   */
  update(key: string, chat: ChatInfo, change: (record: ThreadRecord) => void, options: { wait?: boolean } = {}): Promise<ThreadRecord> {
    return this.mutex.run(key, async () => {
      const record = await this.read(key, chat);
      change(record);
      record.updatedAt = Date.now();
      // A change may have grown the record past the bound (a turn's new messages): measured again.
      if (this.cache.get(key) === record) this.measure(key, record);
      const written = this.persist(key, record);
      if (options.wait !== false) await written;
      return record;
    });
  }

  /**
   * Learns of messages another part of the deployment already keeps in the
   * thread's inbox (a shared inbox on Redis): they join the record here as
   * stored, without a write, so that the turn that reads them takes them out
   * of that inbox in its own write.
   */
  adopt(key: string, chat: ChatInfo, stored: readonly QueuedMessage[]): Promise<void> {
    return this.mutex.run(key, async () => {
      const record = await this.read(key, chat);
      const known = new Set(record.inbox.map((queued) => queued.id));
      const added = stored.filter((queued) => !known.has(queued.id));
      if (!added.length) return;
      record.inbox.push(...added);
      const written = this.written.get(key);
      if (written) this.written.set(key, { messages: written.messages, inbox: new Set([...written.inbox, ...added.map((queued) => queued.id)]) });
    });
  }

  /** Whether this process may still act for the thread: its next tool batch or message (see ThreadStorage). */
  holdsLease(key: string): Promise<boolean> {
    return this.storage.holdsLease?.(key) ?? Promise.resolve(true);
  }

  /** Resolves once the thread's background writes have been made. */
  async flushThread(key: string): Promise<void> {
    for (let pending = this.writes.get(key); pending; pending = this.writes.get(key)) await pending;
  }

  /** Resolves once every background write has been made. */
  async flush(): Promise<void> {
    while (this.writes.size) await Promise.all(this.writes.values());
  }

  private persist(key: string, record: ThreadRecord): Promise<void> {
    // A write waiting its turn serialises the record when it starts, so it
    // carries this change too: a burst of changes costs one write, not one each.
    const waiting = this.queued.get(key);
    if (waiting) {
      waiting.record = record;
      return waiting.write;
    }
    const previous = this.writes.get(key) ?? Promise.resolve();
    const entry = { record, write: Promise.resolve() };
    entry.write = previous.then(() => {
      this.queued.delete(key);
      return this.write(key, entry.record);
    });
    this.queued.set(key, entry);
    const write = entry.write;
    const settled = write.catch((error: unknown) => this.log.error({ err: error, thread: key }, 'thread history not written'));
    this.writes.set(key, settled);
    void settled.then(() => {
      if (this.writes.get(key) === settled) this.writes.delete(key);
    });
    return write;
  }

  /** Writes what changed since the last write; the delta is taken now, when the write starts, so it covers every change it carries. */
  private async write(key: string, record: ThreadRecord): Promise<void> {
    const before = this.written.get(key);
    // A copy: the record's array may grow while the storage writes this one.
    const messages = record.messages.slice();
    const after = writtenOf(messages, record);
    await this.storage.write(key, { ...record, messages }, deltaBetween(before, after));
    // Unless the thread was forgotten or read again meanwhile.
    if (this.written.get(key) === before) this.written.set(key, after);
    // A thread evicted while this write waited keeps what it wrote only for a write queued behind it.
    if (!this.cache.has(key) && !this.queued.has(key)) this.written.delete(key);
  }

  private async read(key: string, chat: ChatInfo): Promise<ThreadRecord> {
    // A record evicted from the cache while its write waits is newer than the stored one.
    let record = this.cache.get(key) ?? this.queued.get(key)?.record;
    if (record) {
      this.cache.delete(key);
    } else {
      record = (await this.storage.read(key)) ?? emptyRecord(key, chat);
      this.written.set(key, writtenOf(record.messages.slice(), record));
    }
    this.cache.set(key, record);
    this.measure(key, record);
    return record;
  }

  /** Notes the cached record's size, then evicts the least recently used others while the cache holds too many or too much. */
  private measure(key: string, record: ThreadRecord): void {
    const size = recordBytes(record);
    this.cachedBytes += size - (this.sizes.get(key) ?? 0);
    this.sizes.set(key, size);
    while (this.cache.size > 1 && (this.cache.size > CACHE_SIZE || this.cachedBytes > THREAD_CACHE_BYTES)) {
      const oldest = this.cache.keys().next().value!;
      if (oldest === key) break;
      this.evict(oldest);
    }
  }

  private uncache(key: string): void {
    this.cache.delete(key);
    this.cachedBytes -= this.sizes.get(key) ?? 0;
    this.sizes.delete(key);
  }

  /**
   * Drops a thread from memory. While a write of it is pending, what was
   * written stays: the queued write compares with it to name the messages it
   * appends and the inbox messages it takes out (a storage that keeps the inbox
   * apart would otherwise keep them, and they would be answered again).
   */
  private evict(key: string): void {
    this.uncache(key);
    if (!this.writes.has(key)) this.written.delete(key);
  }
}

/** A record's size in memory, estimated from the length of its texts (a character as a byte, as V8 keeps most text) and a fixed cost per entry. */
export function recordBytes(record: ThreadRecord): number {
  let bytes = 0;
  for (const message of record.messages) {
    bytes += ENTRY_BYTES + (message.content?.length ?? 0);
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) bytes += ENTRY_BYTES + call.id.length + call.name.length + call.arguments.length;
    if (message.role === 'user') for (const image of message.images ?? []) bytes += ENTRY_BYTES + image.path.length;
  }
  for (const line of record.groupContext) bytes += ENTRY_BYTES + line.text.length;
  for (const queued of record.inbox) bytes += ENTRY_BYTES + queued.text.length;
  return bytes;
}

function writtenOf(messages: readonly ChatMessage[], record: ThreadRecord): Written {
  return { messages, inbox: new Set(record.inbox.map((queued) => queued.id)) };
}

/** The change from `before` to `after`: an append when `after` starts with the very messages of `before`. */
function deltaBetween(before: Written | undefined, after: Written): ThreadDelta {
  const consumed = before ? [...before.inbox].filter((id) => !after.inbox.has(id)) : [];
  const kept = before !== undefined && before.messages.length <= after.messages.length && before.messages.every((message, i) => message === after.messages[i]);
  return kept ? { from: before.messages.length, rewrite: false, consumed } : { from: 0, rewrite: true, consumed };
}

function emptyRecord(key: string, chat: ChatInfo): ThreadRecord {
  return { key, chat: chatFields(chat), messages: [], groupContext: [], usage: zeroUsage(), turns: 0, lastIteration: 0, updatedAt: Date.now(), inbox: [] };
}

function chatFields(chat: ChatInfo): ThreadRecord['chat'] {
  const fields: ThreadRecord['chat'] = { channel: chat.channel, chatId: chat.chatId, kind: chat.kind, scope: chat.scope };
  if (chat.subId !== undefined) fields.subId = chat.subId;
  if (chat.title !== undefined) fields.title = chat.title;
  return fields;
}
