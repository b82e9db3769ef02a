/**
 * keyv's storage on SQLite with its statements prepared once. `@keyv/sqlite`
 * prepares, runs and finalises a new statement for every read and write, all
 * on the event loop's thread; a turn or a job's step makes about ten of them.
 * The table is `@keyv/sqlite`'s (`keyv`, a text key and a text value), so a
 * database written by either reads the same. Expiry stays keyv's (in the value).
 */
import { EventEmitter } from 'node:events';
import sqlite3 from 'sqlite3';

const TABLE = 'keyv';

/** Writes of up to this many records keep their statement prepared; larger ones (a long thread rewritten) prepare one each time. */
const KEPT_BATCH = 16;

/** The statements that write up to {@link KEPT_BATCH} records at once, made once each. */
const upserts: string[] = [];

/** The statement that writes `count` records at once. */
function upsertOf(count: number): string {
  const made = upserts[count] ?? `INSERT INTO ${TABLE} (key, value) VALUES ${Array.from({ length: count }, () => '(?, ?)').join(', ')} ON CONFLICT(key) DO UPDATE SET value = excluded.value`;
  if (count <= KEPT_BATCH) upserts[count] = made;
  return made;
}

/** A keyv store adapter over one SQLite database file. */
export class SqliteKeyvStore extends EventEmitter {
  /** Set by keyv: the prefix of every key. */
  namespace: string | undefined;
  readonly opts = { dialect: 'sqlite' };
  readonly ttlSupport = false;
  private readonly statements = new Map<string, sqlite3.Statement>();

  private constructor(private readonly db: sqlite3.Database) {
    super();
  }

  /** Opens (or creates) the database at `path` and its table. */
  static async open(path: string, options: { busyTimeoutMs?: number } = {}): Promise<SqliteKeyvStore> {
    const db = await new Promise<sqlite3.Database>((resolve, reject) => {
      const opened: sqlite3.Database = new sqlite3.Database(path, (error) => (error ? reject(error) : resolve(opened)));
    });
    if (options.busyTimeoutMs) db.configure('busyTimeout', options.busyTimeoutMs);
    const store = new SqliteKeyvStore(db);
    await store.query(`CREATE TABLE IF NOT EXISTS ${TABLE}(key VARCHAR(255) PRIMARY KEY, value TEXT )`);
    return store;
  }

  async get(key: string): Promise<string | undefined> {
    const row = await this.row<{ value: string | null }>(`SELECT value FROM ${TABLE} WHERE key = ?`, key);
    return row?.value ?? undefined;
  }

  async getMany(keys: string[]): Promise<(string | undefined)[]> {
    return Promise.all(keys.map((key) => this.get(key)));
  }

  async set(key: string, value: string): Promise<void> {
    await this.run(`INSERT INTO ${TABLE} (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value);
  }

  /** Writes every entry in one statement: all of them land or none does. */
  async setMany(entries: { key: string; value: string }[]): Promise<void> {
    // The last write of a key wins, as in separate writes (one statement may not upsert a key twice).
    const byKey = new Map(entries.map((entry) => [entry.key, entry.value]));
    const sql = upsertOf(byKey.size);
    const params = [...byKey].flat();
    if (byKey.size <= KEPT_BATCH) await this.run(sql, ...params);
    else await new Promise<void>((resolve, reject) => this.db.run(sql, params, (error: Error | null) => (error ? reject(error) : resolve())));
  }

  async delete(key: string): Promise<boolean> {
    return (await this.run(`DELETE FROM ${TABLE} WHERE key = ?`, key)) > 0;
  }

  async deleteMany(keys: string[]): Promise<boolean> {
    const deleted = await Promise.all(keys.map((key) => this.delete(key)));
    return deleted.some(Boolean);
  }

  async has(key: string): Promise<boolean> {
    return (await this.row(`SELECT 1 AS found FROM ${TABLE} WHERE key = ?`, key)) !== undefined;
  }

  /** Drops every record of the namespace (of every namespace when there is none). */
  async clear(): Promise<void> {
    await this.run(`DELETE FROM ${TABLE} WHERE key LIKE ?`, this.namespace ? `${this.namespace}:%` : '%');
  }

  /** Runs `sql` once as it is (settings, checks): not kept as a statement. */
  query(sql: string): Promise<unknown[]> {
    return new Promise((resolve, reject) => this.db.all(sql, (error: Error | null, rows: unknown[]) => (error ? reject(error) : resolve(rows))));
  }

  async disconnect(): Promise<void> {
    const statements = [...this.statements.values()];
    this.statements.clear();
    await Promise.all(statements.map((statement) => new Promise<void>((resolve) => statement.finalize(() => resolve()))));
    await new Promise<void>((resolve, reject) => this.db.close((error) => (error ? reject(error) : resolve())));
  }

  /** The statement of `sql`, prepared on first use and kept; a statement runs its calls one after another. */
  private statement(sql: string): sqlite3.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** The first row of a query. Read to its end (`all`), so that the statement holds no read open between calls. */
  private row<T>(sql: string, ...params: unknown[]): Promise<T | undefined> {
    return new Promise((resolve, reject) => {
      const statement = this.statement(sql);
      statement.all(params, (error: Error | null, rows: T[]) => (error ? reject(this.failed(sql, statement, error)) : resolve(rows[0])));
    });
  }

  /** Runs a change; resolves with the number of rows it changed. */
  private run(sql: string, ...params: unknown[]): Promise<number> {
    const failed = (statement: sqlite3.Statement, error: Error) => this.failed(sql, statement, error);
    return new Promise((resolve, reject) => {
      const statement = this.statement(sql);
      statement.run(params, function (this: sqlite3.RunResult, error: Error | null) {
        if (error) reject(failed(statement, error));
        else resolve(this.changes);
      });
    });
  }

  /** A statement that failed is prepared again next time: a failed prepare or a closed database does not stick. */
  private failed(sql: string, statement: sqlite3.Statement, error: Error): Error {
    if (this.statements.get(sql) === statement) {
      this.statements.delete(sql);
      statement.finalize();
    }
    return error;
  }
}
