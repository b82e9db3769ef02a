/**
 * bench/history: what a turn writes to the store as a thread grows. A thread
 * of N stored messages takes turns (a person's message and an answer,
 * appended and saved, as a turn saves them); measured per turn on a SQLite
 * store: the JSON bytes written and the time, (a) for the whole record as the
 * first layout wrote it and (b) for the thread log (KeyvThreadStorage), both
 * through ThreadHistory, in the same run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import { ThreadHistory, ThreadRecordSchema, type ThreadRecord } from '../src/engine/history.js';
import { KeyvThreadStorage, SEGMENT_SIZE } from '../src/engine/thread-log.js';
import type { ThreadStorage } from '../src/engine/thread-storage.js';
import type { ChatInfo } from '../src/channels/types.js';
import type { ChatMessage } from '../src/llm/types.js';
import { silentLogger } from '../src/log.js';
import { Store, type Namespace } from '../src/store/store.js';

const chat: ChatInfo = { channel: 'bench', chatId: 'dm', kind: 'dm', scope: 'global' };

/** Turns per measure: one per tail position (two messages a turn fill two segments), so the mean covers them all. */
const TURNS = SEGMENT_SIZE;

/** The layout before the log: the whole record, messages included, on every write. */
class WholeRecordStorage implements ThreadStorage {
  private readonly records: Namespace<ThreadRecord>;

  constructor(store: Pick<Store, 'namespace'>) {
    this.records = store.namespace('thread', ThreadRecordSchema, 1);
  }

  read(key: string) {
    return this.records.get(key);
  }

  write(key: string, record: ThreadRecord) {
    return this.records.set(key, record);
  }
}

/** The store, counting the JSON bytes of every record written (the envelope included, as stored). */
function metered(store: Store, counter: { bytes: number }): Pick<Store, 'namespace' | 'setMany'> {
  return {
    setMany: (writes) => {
      for (const write of writes) counter.bytes += Buffer.byteLength(JSON.stringify(write.value));
      return store.setMany(writes);
    },
    namespace<S extends z.ZodType>(name: string, schema: S, version = 1): Namespace<z.infer<S>> {
      const inner = store.namespace(name, schema, version);
      return {
        ...inner,
        set: (key, value, ttlMs) => {
          counter.bytes += Buffer.byteLength(JSON.stringify({ v: version, data: value }));
          return inner.set(key, value, ttlMs);
        },
      };
    },
  };
}

const user = (n: number): ChatMessage => ({ role: 'user', content: `Question ${n}: could you look at the numbers from last week and tell me what changed?` });
const answer = (n: number): ChatMessage => ({
  role: 'assistant',
  content: `Answer ${n}: compared with the week before, sign-ups rose by about 12% while churn stayed flat; most of the growth came from the referral campaign, and the support queue was shorter on every day but Monday. ${'Details follow. '.repeat(8)}`,
});
const conversation = (count: number) => Array.from({ length: count }, (_, i) => (i % 2 ? answer(i) : user(i)));

type Layout = 'whole' | 'log';

interface Measure {
  meanBytes: number;
  maxBytes: number;
  msPerTurn: number;
}

/** A thread of `stored` messages, then {@link TURNS} turns; bytes counted when `counter` is given. */
async function measure(store: Store, layout: Layout, stored: number, key: string, counter?: { bytes: number }): Promise<Measure> {
  const target = counter ? metered(store, counter) : store;
  const storage = layout === 'log' ? new KeyvThreadStorage(target) : new WholeRecordStorage(target);
  const history = new ThreadHistory(store, silentLogger, storage);
  await history.update(key, chat, (record) => record.messages.push(...conversation(stored)));
  const perTurn: number[] = [];
  const start = performance.now();
  for (let turn = 0; turn < TURNS; turn++) {
    const before = counter?.bytes ?? 0;
    const record = await history.load(key, chat);
    record.messages = [...record.messages, user(stored + 2 * turn), answer(stored + 2 * turn + 1)];
    await history.save(record);
    perTurn.push((counter?.bytes ?? 0) - before);
  }
  const ms = performance.now() - start;
  return { meanBytes: perTurn.reduce((a, b) => a + b, 0) / TURNS, maxBytes: Math.max(...perTurn), msPerTurn: ms / TURNS };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Runs the benchmark and returns one row per thread length. */
export async function runHistoryBench(lengths: number[] = [10, 100, 1_000, 10_000], rounds = 5) {
  const dir = mkdtempSync(join(tmpdir(), 'pincer-bench-history-'));
  const store = await Store.open({ dataDir: dir });
  try {
    await measure(store, 'log', 1_000, 'warm-up:log');
    await measure(store, 'whole', 1_000, 'warm-up:whole');
    const rows = [];
    for (const stored of lengths) {
      const bytes = { whole: await measure(store, 'whole', stored, `bytes:whole:${stored}`, { bytes: 0 }), log: await measure(store, 'log', stored, `bytes:log:${stored}`, { bytes: 0 }) };
      const times: Record<Layout, number[]> = { whole: [], log: [] };
      for (let round = 0; round < rounds; round++) {
        // Alternated, so that a slow moment of the machine falls on both.
        for (const layout of ['whole', 'log'] as const) times[layout].push((await measure(store, layout, stored, `time:${layout}:${stored}:${round}`)).msPerTurn);
      }
      rows.push({
        'stored messages': stored,
        'whole record bytes/turn': bytes.whole.meanBytes,
        'log bytes/turn': bytes.log.meanBytes,
        'log max bytes/turn': bytes.log.maxBytes,
        'bytes ratio': bytes.whole.meanBytes / bytes.log.meanBytes,
        'whole record ms/turn': median(times.whole),
        'log ms/turn': median(times.log),
      });
    }
    return rows;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
