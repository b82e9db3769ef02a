/**
 * Firing claims in the store: a firing is claimed once; its claim expires
 * after the TTL and is then dropped from the routine's record at the next
 * claim, so that the store keeps no claim for ever; a deleted routine's
 * claims go with it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { StoreClaims } from '../../src/deployment/claims.js';
import { claimTtlMs, FIRING_CLAIMS, firingId } from '../../src/routines/claims.js';
import { Store } from '../../src/store/store.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openStore(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'pincer-claims-'));
  const store = await Store.open({ dataDir: dir, log: silentLogger });
  cleanups.push(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

describe('firing claims in the store', () => {
  it('keep a claim for the catch-up window and a margin', () => {
    expect(claimTtlMs(parseConfig({}).routines)).toBe(2 * 3_600_000);
    expect(claimTtlMs(parseConfig({ routines: { catchUpWindow: '30m' } }).routines)).toBe(90 * 60_000);
  });

  it('claim a firing once, until its claim expires; expired claims leave the record at the next claim', async () => {
    const store = await openStore();
    let now = 1_000_000;
    const claims = new StoreClaims(store, FIRING_CLAIMS, 10_000, () => now);
    expect(await claims.claim('r1', 'r1_1')).toBe(true);
    expect(await claims.claim('r1', 'r1_1')).toBe(false);
    expect(await claims.expiresAt('r1', 'r1_1')).toBe(1_010_000);
    now += 5_000;
    expect(await claims.claim('r1', 'r1_2')).toBe(true);
    now += 6_000;
    expect(await claims.expiresAt('r1', 'r1_1')).toBeUndefined();
    expect(await claims.claim('r1', 'r1_3')).toBe(true);
    const raw = store.namespace('routine-claims', z.record(z.string(), z.number()), 1);
    expect(Object.keys((await raw.get('r1'))!).sort()).toEqual(['r1_2', 'r1_3']);
    await claims.forget('r1');
    expect(await raw.get('r1')).toBeUndefined();
  });

  it('claim each firing apart: the next time of a routine, and another routine at the same time, still run', async () => {
    const store = await openStore();
    const claims = new StoreClaims(store, FIRING_CLAIMS, 10_000, () => 1_000_000);
    const [nine, ten] = [Date.UTC(2026, 0, 5, 9), Date.UTC(2026, 0, 5, 10)];
    expect(await claims.claim('r1', firingId('r1', nine))).toBe(true);
    expect(await claims.claim('r1', firingId('r1', ten))).toBe(true);
    expect(await claims.claim('r2', firingId('r2', nine))).toBe(true);
    // After a restart or on another instance, the same firing has the same id and is refused.
    expect(await claims.claim('r1', firingId('r1', nine))).toBe(false);
    expect(await claims.claim('r2', firingId('r2', nine))).toBe(false);
  });

  it('a refused claim does not lengthen the claim that stands, and an unknown routine has no claim', async () => {
    const store = await openStore();
    let now = 1_000_000;
    const claims = new StoreClaims(store, FIRING_CLAIMS, 10_000, () => now);
    expect(await claims.expiresAt('nobody', 'nobody_1')).toBeUndefined();
    expect(await claims.claim('r1', 'r1_1')).toBe(true);
    now += 9_000;
    expect(await claims.claim('r1', 'r1_1')).toBe(false);
    expect(await claims.expiresAt('r1', 'r1_1')).toBe(1_010_000);
    now += 2_000;
    // Expired, but still in the record until the next claim prunes it: it is not reported as standing.
    expect(await claims.expiresAt('r1', 'r1_1')).toBeUndefined();
    expect(await claims.claim('r1', 'r1_1')).toBe(true);
  });

  it('a claim lasts its TTL to the millisecond: at its expiry it no longer stands, and the firing may be claimed again', async () => {
    const store = await openStore();
    let now = 1_000_000;
    const claims = new StoreClaims(store, FIRING_CLAIMS, 10_000, () => now);
    expect(await claims.claim('r1', 'r1_1')).toBe(true);
    now = 1_009_999;
    expect(await claims.expiresAt('r1', 'r1_1')).toBe(1_010_000);
    expect(await claims.claim('r1', 'r1_1')).toBe(false);
    now = 1_010_000;
    expect(await claims.expiresAt('r1', 'r1_1')).toBeUndefined();
    expect(await claims.claim('r1', 'r1_1')).toBe(true);
    expect(await claims.expiresAt('r1', 'r1_1')).toBe(1_020_000);
  });
});
