/**
 * One process per SQLite store: a second pincer on the same data folder
 * would interleave its writes with the first one's and answer every message
 * twice. The lock is a file next to the database holding the owner's pid,
 * created exclusively; a lock whose process is gone (a kill -9) is taken over.
 * A Postgres database gets the same guarantee from an advisory lock, which
 * the server releases when the holder's connection ends.
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { StoreError } from '../errors.js';

/**
 * Takes the lock at `path` for this process; returns its release.
 * @throws StoreError when a live process holds it
 */
export function acquireProcessLock(path: string, storeUrl: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number(readFileSync(path, 'utf8').trim());
    if (holder === process.pid) return () => undefined;
    if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
      throw new StoreError(
        storeUrl,
        `another pincer (pid ${holder}) is using this data folder; one process per SQLite store. Stop it first, or use a Redis store (PINCER_STORE_URL=redis://...) to run several instances.`,
      );
    }
    // Left by a process that died: take it over.
    rmSync(path, { force: true });
  }
  throw new StoreError(storeUrl, `could not take the lock ${path}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The advisory lock key of pincer in a Postgres database. */
const POSTGRES_LOCK_KEY = 0x70696e63; // "pinc"

/**
 * One instance per Postgres database: a session-level advisory lock held on a
 * connection of its own for as long as the store is open; returns its release.
 * @throws StoreError when another session holds it
 */
export async function acquirePostgresLock(url: string, connectTimeoutMs: number, shownUrl: string): Promise<() => Promise<void>> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs });
  await client.connect();
  const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [POSTGRES_LOCK_KEY]);
  if (!rows[0]?.locked) {
    await client.end();
    throw new StoreError(
      shownUrl,
      'another pincer instance is using this Postgres database; one instance per Postgres database. Stop it first, or use a Redis store (PINCER_STORE_URL=redis://...) to run several instances.',
    );
  }
  return async () => {
    await client.query('SELECT pg_advisory_unlock($1)', [POSTGRES_LOCK_KEY]).catch(() => undefined);
    await client.end().catch(() => undefined);
  };
}
