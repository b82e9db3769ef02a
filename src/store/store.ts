/**
 * Persistence over keyv: SQLite by default, Redis or Postgres by URL.
 * Records are grouped in typed namespaces; each record carries a schema version
 * and is validated when read, so a corrupt record is set aside, never a crash.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Keyv, { type KeyvOptions } from 'keyv';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { connectWithin, type Connection } from './connect.js';
import { KeyedMutex } from './mutex.js';
import { ensurePrivateDir, ensurePrivateFile, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, tightenIfPresent } from './private-files.js';
import { acquirePostgresLock, acquireProcessLock } from './process-lock.js';
import { RedisCompareAndSet } from './redis-cas.js';
import { RedisConnections } from './redis-connections.js';
import { redisKeyOf, RedisKeyvStore } from './redis-keyv.js';
import { storeSchemeOf, withoutPassword } from './url.js';

/** The prefix of every key in the store. */
const NAMESPACE = 'pincer';

/** The stored envelope around every record. */
export interface Envelope {
  v: number;
  data: unknown;
}

/**
 * One record's write, made by {@link Namespace.entry} and written by
 * {@link Store.setMany} or with a record's {@link Namespace.update}.
 */
export interface StoreWrite {
  readonly namespace: string;
  readonly key: string;
  /** The stored form: the record in its envelope. */
  readonly value: Envelope;
  readonly ttlMs?: number;
}

/** A typed collection of records under one key prefix. */
export interface Namespace<T> {
  get(key: string): Promise<T | undefined>;
  set(key: string, value: T, ttlMs?: number): Promise<void>;
  delete(key: string): Promise<boolean>;
  /** The write of `value` under `key`, for {@link Store.setMany}: nothing is written yet. */
  entry(key: string, value: T, ttlMs?: number): StoreWrite;
  /**
   * Reads, changes and writes one record with no other `update` of the same key
   * in between: within this process (SQLite and Postgres have one process per
   * store), and across instances on Redis (compare-and-set; `change` may then run
   * more than once). `also` is written in the same store operation as the
   * record: both land or neither does.
   */
  update(key: string, change: (current: T | undefined) => T | undefined, also?: readonly StoreWrite[]): Promise<T | undefined>;
}

/** Options of {@link Store.namespace}. */
export interface NamespaceOptions {
  /**
   * How many of the records this process last wrote with `update` to keep in
   * memory, so that `get` and `update` of them do not read the store: where one
   * process owns the store (SQLite, Postgres). On Redis, other instances write
   * the same records, so nothing is kept there.
   */
  hold?: number;
}

/** Options for {@link openStore}. */
export interface StoreOptions {
  /** `sqlite://path`, `redis://...`, `postgres://...`; default SQLite in `dataDir`. */
  url?: string;
  /** The data folder; created (or tightened) to be readable by its owner only. */
  dataDir?: string;
  log?: Logger;
  /** How long to wait for Redis or Postgres to answer (default 10 s). */
  connectTimeoutMs?: number;
  /** Gives up connecting at once (a shutdown during the start). */
  signal?: AbortSignal;
  /**
   * The instance's connections to a Redis store at `url`, shared with the rest
   * of the instance and left open by {@link Store.close}; without it, a Redis
   * store makes its own and closes them.
   */
  redis?: RedisConnections;
}

/** Defaults of {@link StoreOptions}. */
export const DEFAULT_STORE_OPTIONS = { connectTimeoutMs: 10_000 } as const satisfies Partial<StoreOptions>;

/** The process's persistent store. */
export class Store {
  private readonly mutex = new KeyedMutex();

  private constructor(
    private readonly keyv: Keyv,
    readonly url: string,
    private readonly log: Logger,
    private readonly release: () => void | Promise<void> = () => undefined,
    private readonly cas?: RedisCompareAndSet,
    /** A Redis store's connections, for the rest of the instance to share. */
    readonly redis?: RedisConnections,
  ) {}

  /**
   * Opens the store named by `options.url` (default: SQLite under the data dir).
   *
   * @throws ConfigError for an unsupported URL scheme
   * @throws StoreError when Redis or Postgres cannot be reached within the time limit
   */
  static async open(options: StoreOptions = {}): Promise<Store> {
    const log = options.log ?? silentLogger;
    if (options.dataDir !== undefined) ensurePrivateDir(options.dataDir, log);
    const url = options.url ?? `sqlite://${join(options.dataDir ?? './data', 'pincer.sqlite')}`;
    const limits = { timeoutMs: options.connectTimeoutMs ?? DEFAULT_STORE_OPTIONS.connectTimeoutMs, signal: options.signal };
    // One process per SQLite file: a second one would answer every message twice.
    const release = storeSchemeOf(url) === 'sqlite' ? lockSqlite(resolve(url.replace(/^sqlite:\/\//, '')), url) : undefined;
    let opened: Opened;
    try {
      opened = await adapterFor(url, log, limits.timeoutMs, options.redis);
    } catch (error) {
      release?.();
      throw error;
    }
    const { adapter, connection, redis } = opened;
    if (connection) await connectWithin(url, connection, limits);
    // One instance per Postgres database, as one process per SQLite file (the server answered above).
    const scheme = storeSchemeOf(url);
    const releasePostgres = scheme === 'postgres' || scheme === 'postgresql' ? await acquirePostgresLock(url, limits.timeoutMs, withoutPassword(url)) : undefined;
    // Records are plain JSON; the native serialiser is several times faster than keyv's default.
    const keyv = new Keyv({
      store: adapter,
      namespace: NAMESPACE,
      useKeyPrefix: false,
      serialize: (data) => JSON.stringify(data),
      deserialize: (text) => JSON.parse(text) as never,
    });
    keyv.on('error', (error: unknown) => log.error({ err: error }, 'store error'));
    return new Store(
      keyv,
      url,
      log,
      async () => {
        release?.();
        await releasePostgres?.();
        // Connections lent by the instance stay open for the rest of it.
        if (!options.redis) redis?.close();
      },
      // Several instances may share a Redis store: updates there compare and set.
      redis && new RedisCompareAndSet(redis.command, withoutPassword(url)),
      redis,
    );
  }

  /**
   * No other process writes this store: SQLite and Postgres are locked to one
   * process, while instances share a Redis store. What this process last wrote
   * is then what the store holds.
   */
  get exclusive(): boolean {
    return !this.cas;
  }

  /** A namespace of records validated by `schema`, written with `version`. */
  namespace<S extends z.ZodType>(name: string, schema: S, version = 1, options: NamespaceOptions = {}): Namespace<z.infer<S>> {
    type T = z.infer<S>;
    const keyOf = (key: string) => `${name}:${key}`;
    // Records kept in memory are copies: a caller may change what it was given or gave.
    const held = options.hold && this.exclusive ? new HeldRecords<T>(options.hold) : undefined;
    const read = async (key: string): Promise<T | undefined> => {
      let raw: unknown;
      try {
        raw = await this.keyv.get(keyOf(key));
      } catch (error) {
        this.log.error({ err: error, namespace: name, key }, 'store read failed');
        throw error;
      }
      if (raw === undefined || raw === null) return undefined;
      return this.decode(name, key, raw, schema, version);
    };
    const entry = (key: string, value: T, ttlMs?: number): StoreWrite => ({ namespace: name, key, value: { v: version, data: value }, ...(ttlMs === undefined ? {} : { ttlMs }) });
    const write = async (key: string, value: T, ttlMs?: number) => {
      await this.keyv.set(keyOf(key), entry(key, value, ttlMs).value, ttlMs);
    };
    // A plain set or delete of a held record goes in turn with its updates, so that what is held stays what is stored.
    const inTurn = <R>(key: string, work: () => Promise<R>): Promise<R> => (held ? this.mutex.run(keyOf(key), work) : work());
    return {
      get: async (key) => held?.get(key) ?? (await read(key)),
      set: (key, value, ttlMs) =>
        inTurn(key, async () => {
          held?.drop(key);
          await write(key, value, ttlMs);
        }),
      delete: (key) =>
        inTurn(key, async () => {
          held?.drop(key);
          return this.keyv.delete(keyOf(key));
        }),
      entry,
      update: (key, change, also = []) =>
        this.mutex.run(keyOf(key), async () => {
          if (this.cas) {
            const envelope = await this.cas.update(
              redisKeyOf(NAMESPACE, keyOf(key)),
              async (raw) => {
                const next = change(raw === undefined || raw === null ? undefined : await this.decode(name, key, raw, schema, version));
                return next === undefined ? undefined : ({ v: version, data: next } satisfies Envelope);
              },
              also.map((other) => ({ key: redisKeyOf(NAMESPACE, `${other.namespace}:${other.key}`), value: other.value, ttlMs: other.ttlMs })),
            );
            return (envelope as Envelope | undefined)?.data as T | undefined;
          }
          // A failed write leaves nothing held: what the store holds is unknown.
          const current = held?.take(key) ?? (await read(key));
          const next = change(current);
          if (next === undefined) {
            if (also.length) await this.setMany(also);
            await this.keyv.delete(keyOf(key));
          } else {
            await this.setMany([...also, entry(key, next)]);
            held?.keep(key, next);
          }
          return next;
        }),
    };
  }

  /**
   * Writes several records as one store operation: all of them land or none
   * does (one statement on SQLite and Postgres, one transaction on Redis).
   */
  async setMany(writes: readonly StoreWrite[]): Promise<void> {
    // The last write of a key wins, as in separate writes (Postgres refuses a statement that writes a key twice).
    const byKey = new Map(writes.map((write) => [`${write.namespace}:${write.key}`, write]));
    if (!byKey.size) return;
    await this.keyv.setMany([...byKey].map(([key, write]) => ({ key, value: write.value, ...(write.ttlMs === undefined ? {} : { ttl: write.ttlMs }) })));
  }

  /** Closes the connection; pending writes complete first. */
  async close(): Promise<void> {
    await this.mutex.idle();
    await this.keyv.disconnect();
    await this.release();
  }

  private async decode<S extends z.ZodType>(
    name: string,
    key: string,
    raw: unknown,
    schema: S,
    version: number,
  ): Promise<z.infer<S> | undefined> {
    const envelope = raw as Partial<Envelope>;
    const parsed =
      typeof envelope === 'object' && envelope.v === version ? schema.safeParse(envelope.data) : undefined;
    if (parsed?.success) return parsed.data;
    const reason = parsed ? parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') : `unexpected schema version ${String(envelope?.v)}`;
    this.log.warn({ namespace: name, key, reason }, 'corrupt record set aside');
    try {
      await this.keyv.set(`corrupt:${name}:${key}:${Date.now()}`, raw);
      await this.keyv.delete(`${name}:${key}`);
    } catch (error) {
      this.log.error({ err: error }, 'could not set a corrupt record aside');
    }
    return undefined;
  }
}

/** Records of one namespace as this process last wrote or read them, the most recently used ones. */
class HeldRecords<T> {
  private readonly records = new Map<string, T>();

  constructor(private readonly limit: number) {}

  /** A copy of the record held for `key`, if any. */
  get(key: string): T | undefined {
    const record = this.records.get(key);
    return record === undefined ? undefined : copyOf(record);
  }

  /** The record held for `key`, no longer held (an update holds it again once written). */
  take(key: string): T | undefined {
    const record = this.records.get(key);
    this.records.delete(key);
    return record;
  }

  keep(key: string, record: T): void {
    this.records.delete(key);
    this.records.set(key, copyOf(record));
    if (this.records.size > this.limit) this.records.delete(this.records.keys().next().value!);
  }

  drop(key: string): void {
    this.records.delete(key);
  }
}

/**
 * A record as the store would give it back: records are plain JSON, and a JSON
 * round trip copies them several times faster than `structuredClone` does in Node 20.
 */
function copyOf<T>(record: T): T {
  return JSON.parse(JSON.stringify(record)) as T;
}

/** A keyv adapter, with how to connect it when it talks to a server. */
interface Opened {
  adapter: KeyvOptions['store'];
  connection?: Connection;
  /** A Redis store's connections. */
  redis?: RedisConnections;
}

async function adapterFor(url: string, log: Logger, connectTimeoutMs: number, shared?: RedisConnections): Promise<Opened> {
  const scheme = storeSchemeOf(url);
  switch (scheme) {
    case 'sqlite':
      return { adapter: await openSqlite(resolve(url.replace(/^sqlite:\/\//, '')), log) };
    case 'redis':
    case 'rediss': {
      const redis = shared ?? (await RedisConnections.open(url, log));
      const adapter = new RedisKeyvStore(redis.command);
      const close = async () => void (shared ? undefined : redis.close());
      return { adapter, redis, connection: { adapter: redis.command, ready: () => redis.ready(), close } };
    }
    case 'postgres':
    case 'postgresql': {
      const { default: KeyvPostgres } = await import('@keyv/postgres');
      // pg waits for a silent server forever unless told otherwise; the option reaches its pool.
      const adapter = new KeyvPostgres({ uri: url, connectionTimeoutMillis: connectTimeoutMs } as ConstructorParameters<typeof KeyvPostgres>[0]);
      return { adapter, connection: { adapter, ready: () => adapter.query('SELECT 1'), close: () => adapter.disconnect() } };
    }
    default:
      throw new ConfigError([`storeUrl (PINCER_STORE_URL): unsupported store URL scheme "${url.slice(0, Math.max(0, url.indexOf(':')))}"; expected sqlite://path, redis://host:port or postgres://user@host/db`]);
  }
}

/** Takes the one-process lock of a SQLite database (its folder made first, private, as openSqlite makes it). */
function lockSqlite(path: string, url: string): () => void {
  mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
  return acquireProcessLock(`${path}.lock`, url);
}

async function openSqlite(path: string, log: Logger) {
  const { SqliteKeyvStore } = await import('./sqlite-keyv.js');
  // A folder made here is private; an existing one is the user's choice (the data folder was tightened above).
  mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
  // Created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the database's mode.
  ensurePrivateFile(path, log);
  for (const companion of ['-wal', '-shm', '-journal']) tightenIfPresent(path + companion, PRIVATE_FILE_MODE, log);
  const adapter = await SqliteKeyvStore.open(path, { busyTimeoutMs: 10_000 });
  // WAL with normal sync: a write is one append, not a full journal rewrite and two fsyncs;
  // a power cut can lose the last moments, never corrupt the file.
  await adapter.query('PRAGMA journal_mode = WAL');
  await adapter.query('PRAGMA synchronous = NORMAL');
  return adapter;
}
