import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createAuditLog, type AuditRecord } from '../../src/tools/audit.js';
import { openStore, tempDir } from './support.js';

const temps: (() => void)[] = [];
afterEach(() => temps.splice(0).forEach((cleanup) => cleanup()));

const entry = (i: number): AuditRecord => ({
  kind: 'call',
  tool: `t${i}`,
  userId: 'u',
  threadKey: 'k',
  args: '{}',
  status: 'ok',
  durationMs: i,
  at: i,
});

describe('audit log', () => {
  it('keeps the newest records up to its capacity, newest first', async () => {
    const temp = tempDir();
    temps.push(temp.cleanup);
    const store = await openStore(temp.dir);
    const audit = createAuditLog(store, { capacity: 3, log: silentLogger });
    for (let i = 1; i <= 5; i++) await audit.record(entry(i));
    expect((await audit.recent()).map((r) => r.tool)).toEqual(['t5', 't4', 't3']);
    expect((await audit.recent(2)).map((r) => r.tool)).toEqual(['t5', 't4']);
    await store.close();
  });

  it('logs a failed write instead of throwing', async () => {
    const failing = Promise.reject(new Error('disk full'));
    failing.catch(() => undefined);
    const brokenStore = {
      namespace: () => ({ get: () => failing, set: () => failing, update: () => failing, delete: () => failing }),
    } as unknown as Parameters<typeof createAuditLog>[0];
    const errors: unknown[] = [];
    const log = { ...silentLogger, error: (...args: unknown[]) => errors.push(args) } as unknown as typeof silentLogger;
    const audit = createAuditLog(brokenStore, { log });
    await expect(audit.record(entry(1))).resolves.toBeUndefined();
    expect(errors).toHaveLength(1);
  });
});
