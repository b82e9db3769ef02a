/**
 * Thread records as an append log over the store: a small head per thread
 * (every field but the messages, and where the messages are) and the messages
 * in fixed-size segments. A turn rewrites the tail segment and the head,
 * whatever the thread's length, in one store operation; replacing the history
 * writes a new generation of segments and the head that points at it, then
 * deletes the old ones.
 *
 * The head is the commit point: it decides which messages count, and it is
 * written with its segments (last of them, where a store writes them one by
 * one), so a process killed at any point leaves the thread as the last head
 * written describes it.
 */
import { z } from 'zod';
import type { ChatMessage } from '../llm/types.js';
import { silentLogger, type Logger } from '../log.js';
import { KeyedMutex } from '../store/mutex.js';
import type { Namespace, Store, StoreWrite } from '../store/store.js';
import { ChatMessageSchema, ThreadRecordSchema, type ThreadRecord } from './thread-record.js';
import type { ThreadDelta, ThreadStorage } from './thread-storage.js';

/** Messages per segment: besides the head, an append rewrites at most this many. */
export const SEGMENT_SIZE = 64;

/** Threads whose layout is remembered between writes (the most recently used ones). */
const PLACEMENTS = 2_000;

/**
 * The generation of a thread without a head. Its record, if any, is the whole
 * record the first layout wrote (namespace `thread`); retiring it deletes that.
 */
const LEGACY = 0;

/** A generation the head no longer points at, listed in the head until its segments are deleted. */
const RetiredSchema = z.object({ generation: z.number().int().nonnegative(), segments: z.number().int().nonnegative() });
type Retired = z.infer<typeof RetiredSchema>;

/**
 * Zod schema of a thread's head. Built when a storage is made, not when this
 * module loads: history.ts imports this module, so its schemas do not exist yet then.
 */
function headSchema() {
  return ThreadRecordSchema.omit({ messages: true }).extend({
    /** The generation of segments holding the messages (a number no other head of the thread has used). */
    generation: z.number().int().positive(),
    /** How many messages count; a segment holding more (an append cut short) is sliced. */
    count: z.number().int().nonnegative(),
    retired: z.array(RetiredSchema).optional(),
  });
}
type ThreadHead = z.infer<ReturnType<typeof headSchema>>;

/**
 * Writes a thread's records (its segments, then its head) as one store
 * operation; a caller's own may write records of its own in the same one.
 */
export type ThreadCommit = (writes: StoreWrite[]) => Promise<void>;

/** Where a thread's messages are, as this process last read or wrote them. */
interface Placement {
  generation: number;
  count: number;
  /** Segments this generation may hold (deleted when it is replaced). */
  segments: number;
  /** Generations (or the record of the first layout) still to delete. */
  retired: Retired[];
}

/**
 * {@link ThreadStorage} over the store: heads in namespace `thread-head`,
 * segments in `thread-messages` under `<thread>:<generation>:<index>`. Records
 * of the first layout (namespace `thread`) are read while a thread has no head;
 * the first write moves them to this one.
 *
 * @example
 * const history = new ThreadHistory(store, log, new KeyvThreadStorage(store, log));
 */
export class KeyvThreadStorage implements ThreadStorage {
  private readonly heads: Namespace<ThreadHead>;
  private readonly segments: Namespace<ChatMessage[]>;
  private readonly legacy: Namespace<ThreadRecord>;
  private readonly placements = new Map<string, Placement>();
  /** Threads read with a segment missing: what was read is not what the layout says, so the next write rewrites. */
  private readonly damaged = new Set<string>();
  private readonly mutex = new KeyedMutex();
  private readonly commit: ThreadCommit;

  constructor(
    store: Pick<Store, 'namespace' | 'setMany'>,
    private readonly log: Logger = silentLogger,
  ) {
    this.commit = (writes) => store.setMany(writes);
    this.heads = store.namespace('thread-head', headSchema(), 1);
    this.segments = store.namespace('thread-messages', z.array(ChatMessageSchema), 1);
    this.legacy = store.namespace('thread', ThreadRecordSchema, 1);
  }

  read(key: string): Promise<ThreadRecord | undefined> {
    return this.mutex.run(key, async () => {
      const head = await this.heads.get(key);
      if (!head) {
        const legacy = await this.legacy.get(key);
        this.place(key, { ...headless(legacy !== undefined), count: legacy?.messages.length ?? 0 });
        return legacy;
      }
      this.place(key, placementOf(head));
      return recordOf(head, await this.readMessages(key, head));
    });
  }

  /** See {@link ThreadStorage.write}; `commit` writes the thread's records, with whatever it adds (default: the store's `setMany`). */
  write(key: string, record: ThreadRecord, delta: ThreadDelta, commit: ThreadCommit = this.commit): Promise<void> {
    return this.mutex.run(key, async () => {
      const placed = this.placements.get(key) ?? (await this.locate(key));
      let next: Placement;
      try {
        next = this.mustRewrite(key, placed, delta, record) ? await this.rewrite(key, record, placed, commit) : await this.append(key, record, delta.from, placed, commit);
      } catch (error) {
        // What the store holds now is unknown: the next write reads the head again.
        this.placements.delete(key);
        throw error;
      }
      this.place(key, next);
      await this.retire(key, next);
    });
  }

  private mustRewrite(key: string, placed: Placement, delta: ThreadDelta, record: ThreadRecord): boolean {
    // A gap between the stored messages and the new ones would shift every later index.
    return delta.rewrite || placed.generation === LEGACY || this.damaged.has(key) || delta.from > placed.count || delta.from > record.messages.length;
  }

  /** Writes the segments from the one holding `from` to the end, and the head. */
  private async append(key: string, record: ThreadRecord, from: number, placed: Placement, commit: ThreadCommit): Promise<Placement> {
    const count = record.messages.length;
    const first = Math.floor(from / SEGMENT_SIZE);
    const end = count > from ? segmentsFor(count) : first;
    const next = { ...placed, count, segments: Math.max(placed.segments, end) };
    await commit([...this.segmentWrites(key, placed.generation, record.messages, first, end), this.heads.entry(key, headOf(record, next))]);
    return next;
  }

  /** Writes every message in a new generation, and the head pointing at it; the old one is retired. */
  private async rewrite(key: string, record: ThreadRecord, placed: Placement, commit: ThreadCommit): Promise<Placement> {
    // The time, not a count: new to the store without reading it, even if another process
    // rewrote the thread since this one last read it. Whichever head is written last wins,
    // and it points at segments no other write touched.
    const generation = Math.max(Date.now(), placed.generation + 1);
    const count = record.messages.length;
    const old = placed.generation === LEGACY ? [] : [{ generation: placed.generation, segments: placed.segments }];
    const retired = mergeRetired([...placed.retired, ...old], generation);
    const next = { generation, count, segments: segmentsFor(count), retired };
    await commit([...this.segmentWrites(key, generation, record.messages, 0, segmentsFor(count)), this.heads.entry(key, headOf(record, next))]);
    this.damaged.delete(key);
    return next;
  }

  /** The writes of segments `first` to `end` (excluded) of a generation. */
  private segmentWrites(key: string, generation: number, messages: readonly ChatMessage[], first: number, end: number): StoreWrite[] {
    return Array.from({ length: end - first }, (_, i) => {
      const index = first + i;
      return this.segments.entry(segmentKey(key, generation, index), messages.slice(index * SEGMENT_SIZE, (index + 1) * SEGMENT_SIZE));
    });
  }

  /** Deletes the retired generations; one that fails stays listed, and the next write tries again. */
  private async retire(key: string, placed: Placement): Promise<void> {
    const left: Retired[] = [];
    for (const retired of placed.retired) {
      try {
        if (retired.generation === LEGACY) await this.legacy.delete(key);
        else await allSettled(Array.from({ length: retired.segments }, (_, index) => this.segments.delete(segmentKey(key, retired.generation, index))));
      } catch (error) {
        this.log.warn({ err: error, thread: key, generation: retired.generation }, 'replaced thread messages not deleted');
        left.push(retired);
      }
    }
    placed.retired = left;
  }

  private async readMessages(key: string, head: ThreadHead): Promise<ChatMessage[]> {
    const reads = Array.from({ length: segmentsFor(head.count) }, (_, index) => this.segments.get(segmentKey(key, head.generation, index)));
    const messages: ChatMessage[] = [];
    let lost = 0;
    for (const [index, segment] of (await Promise.all(reads)).entries()) {
      const expected = Math.min(SEGMENT_SIZE, head.count - index * SEGMENT_SIZE);
      const kept = segment?.slice(0, expected) ?? [];
      lost += expected - kept.length;
      messages.push(...kept);
    }
    if (lost) {
      // A corrupt segment is set aside by the store; the thread goes on without its messages.
      this.log.warn({ thread: key, lost }, 'thread messages missing');
      this.damaged.add(key);
    }
    return messages;
  }

  /** The head's placement, for a write with nothing remembered of the thread. */
  private async locate(key: string): Promise<Placement> {
    const head = await this.heads.get(key);
    return head ? placementOf(head) : headless(true);
  }

  private place(key: string, placed: Placement): void {
    this.placements.delete(key);
    this.placements.set(key, placed);
    if (this.placements.size > PLACEMENTS) this.placements.delete(this.placements.keys().next().value!);
  }
}

function segmentKey(key: string, generation: number, index: number): string {
  return `${key}:${generation}:${index}`;
}

function segmentsFor(count: number): number {
  return Math.ceil(count / SEGMENT_SIZE);
}

/** A thread without a head; the record of the first layout, when there may be one, is deleted once it has one. */
function headless(legacy: boolean): Placement {
  return { generation: LEGACY, count: 0, segments: 0, retired: legacy ? [{ generation: LEGACY, segments: 0 }] : [] };
}

function placementOf(head: ThreadHead): Placement {
  return { generation: head.generation, count: head.count, segments: segmentsFor(head.count), retired: head.retired ?? [] };
}

function headOf(record: ThreadRecord, placed: Placement): ThreadHead {
  const { messages: _messages, ...fields } = record;
  const head: ThreadHead = { ...fields, generation: placed.generation, count: placed.count };
  if (placed.retired.length) head.retired = placed.retired;
  return head;
}

function recordOf(head: ThreadHead, messages: ChatMessage[]): ThreadRecord {
  const { generation: _generation, count: _count, retired: _retired, ...fields } = head;
  return { ...fields, messages };
}

/**
 * Waits for every one, then fails with the first failure: a write that failed
 * must not land after the next write of the same key.
 */
async function allSettled(operations: Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(operations)).find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}

/** One entry per generation, the larger segment count kept; never the `current` one. */
function mergeRetired(list: Retired[], current: number): Retired[] {
  const byGeneration = new Map<number, number>();
  for (const { generation, segments } of list) {
    if (generation !== current) byGeneration.set(generation, Math.max(segments, byGeneration.get(generation) ?? 0));
  }
  return [...byGeneration].map(([generation, segments]) => ({ generation, segments }));
}
