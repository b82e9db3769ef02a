/**
 * Schedules on a fixed clock: `at`, `every`, `cron` in two time zones and
 * across a DST change, the plain words of the approval prompt, and the
 * minimum interval.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { describeSchedule, formatTime, nextFiring, nextFirings, parseDuration, parseSchedule, parseTime } from '../../src/routines/schedule.js';
import { routineTools } from '../../src/routines/tools.js';
import type { ToolContext } from '../../src/tools/types.js';
import { silentLogger } from '../../src/log.js';

const iso = (time: number | undefined) => (time === undefined ? undefined : new Date(time).toISOString());
const NOW = Date.parse('2026-03-27T12:00:00Z'); // a Friday, two days before Europe's DST change

describe('schedules', () => {
  it('fires an `at` schedule once, read in its time zone unless it has an offset', () => {
    const parsed = parseSchedule({ at: '2026-03-28T09:30' }, 'Europe/Berlin', NOW);
    expect(parsed).toEqual({ ok: true, schedule: { kind: 'at', at: Date.parse('2026-03-28T08:30:00Z') } });
    if (!parsed.ok) return;
    expect(iso(nextFiring(parsed.schedule, 'Europe/Berlin', NOW))).toBe('2026-03-28T08:30:00.000Z');
    expect(nextFiring(parsed.schedule, 'Europe/Berlin', Date.parse('2026-03-28T08:30:00Z'))).toBeUndefined();
    expect(parseSchedule({ at: '2026-03-28T09:30:00Z' }, 'Europe/Berlin', NOW)).toEqual({ ok: true, schedule: { kind: 'at', at: Date.parse('2026-03-28T09:30:00Z') } });
    expect(parseSchedule({ at: '2026-03-20T09:30' }, 'UTC', NOW)).toMatchObject({ ok: false, error: expect.stringMatching(/in the past/) });
    expect(parseSchedule({ at: 'next tuesday' }, 'UTC', NOW)).toMatchObject({ ok: false, error: expect.stringMatching(/ISO-8601/) });
  });

  it('fires `every` on its interval from its start, whatever the clock says', () => {
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('2 h')).toBe(7_200_000);
    expect(parseDuration('soon')).toBeUndefined();
    const schedule = { kind: 'every' as const, everyMs: 2 * 3_600_000, from: NOW };
    expect(nextFirings(schedule, 'UTC', NOW, 3).map(iso)).toEqual(['2026-03-27T14:00:00.000Z', '2026-03-27T16:00:00.000Z', '2026-03-27T18:00:00.000Z']);
    // A day later (it was down meanwhile): the next one on the same grid, not "now + 2 h".
    expect(iso(nextFiring(schedule, 'UTC', Date.parse('2026-03-28T13:05:00Z')))).toBe('2026-03-28T14:00:00.000Z');
  });

  it('fires `cron` in each time zone, across the spring DST change in Berlin and not in New York', () => {
    const weekdays = { kind: 'cron' as const, cron: '0 9 * * 1-5' };
    expect(nextFirings(weekdays, 'Europe/Berlin', NOW, 3).map(iso)).toEqual([
      '2026-03-30T07:00:00.000Z', // Monday after the change: 09:00 CEST = 07:00 UTC
      '2026-03-31T07:00:00.000Z',
      '2026-04-01T07:00:00.000Z',
    ]);
    expect(nextFirings(weekdays, 'America/New_York', NOW, 2).map(iso)).toEqual(['2026-03-27T13:00:00.000Z', '2026-03-30T13:00:00.000Z']);
    // 02:30 does not exist in Berlin on 29 March: that day it fires once, at the first valid time.
    const nightly = { kind: 'cron' as const, cron: '30 2 * * *' };
    expect(nextFirings(nightly, 'Europe/Berlin', Date.parse('2026-03-28T00:00:00Z'), 3).map(iso)).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
    expect(parseSchedule({ cron: '0 9 * *' }, 'UTC', NOW)).toMatchObject({ ok: false, error: expect.stringMatching(/5-field/) });
    expect(parseSchedule({ every: '1h', cron: '0 9 * * *' }, 'UTC', NOW)).toMatchObject({ ok: false, error: expect.stringMatching(/exactly one/) });
  });

  it('reads a wall time in a zone across the autumn change', () => {
    expect(iso(parseTime('2026-10-25T12:00', 'Europe/Berlin'))).toBe('2026-10-25T11:00:00.000Z');
    expect(iso(parseTime('2026-10-24T12:00', 'Europe/Berlin'))).toBe('2026-10-24T10:00:00.000Z');
  });

  it('says the schedule in plain words', () => {
    expect(describeSchedule({ kind: 'cron', cron: '0 9 * * 1-5' }, 'Europe/Berlin', NOW)).toBe('every weekday at 09:00 Europe/Berlin');
    expect(describeSchedule({ kind: 'cron', cron: '30 7 * * *' }, 'UTC', NOW)).toBe('every day at 07:30 UTC');
    expect(describeSchedule({ kind: 'cron', cron: '0 8 1 * *' }, 'UTC', NOW)).toBe('on day 1 of each month at 08:00 UTC');
    expect(describeSchedule({ kind: 'at', at: Date.parse('2026-03-28T14:30:00Z') }, 'UTC', NOW)).toBe('once, tomorrow at 14:30 UTC');
    expect(describeSchedule({ kind: 'every', everyMs: 1_800_000, from: NOW }, 'UTC', NOW)).toBe('every 30 minutes');
    expect(formatTime(Date.parse('2026-04-03T07:00:00Z'), 'Europe/Berlin', NOW)).toBe('on Fri, 3 Apr 2026 at 09:00 Europe/Berlin');
  });
});

describe('the schedule tool', () => {
  const config = parseConfig({ routines: { minIntervalSeconds: 300 } });
  const ctx = { userId: 'test:owner', userName: 'Ada', threadKey: 'test:dm-owner', channel: 'test', scope: 'global', approval: { kind: 'chat', chatKind: 'dm' }, signal: new AbortController().signal, log: silentLogger } as ToolContext;
  const [schedule] = routineTools({
    config,
    routines: undefined as never,
    grants: undefined as never,
    history: { get: async () => undefined } as never,
    scheduler: () => {
      throw new Error('not reached');
    },
    now: () => NOW,
  });

  it('refuses a schedule more frequent than the minimum interval, with a clear result', async () => {
    await expect(schedule.execute({ message: 'drink water', every: '1m' }, ctx)).rejects.toThrow(/fires every 60 s; routines may fire at most once every 300 s/);
    await expect(schedule.execute({ message: 'tick', cron: '*/2 * * * *' }, ctx)).rejects.toThrow(/fires every 120 s/);
  });

  it('shows the schedule and its next three firings in the approval prompt', () => {
    expect(schedule.describe!({ message: 'stand-up', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' })).toBe(
      'Schedule the reminder "stand-up" every weekday at 09:00 Europe/Berlin. Next: on Mon, 30 Mar 2026 at 09:00 Europe/Berlin; on Tue, 31 Mar 2026 at 09:00 Europe/Berlin; on Wed, 1 Apr 2026 at 09:00 Europe/Berlin.',
    );
  });

  it('needs exactly one of prompt and message, and a real time zone', async () => {
    await expect(schedule.execute({ at: '2026-03-28T09:00' }, ctx)).rejects.toThrow(/exactly one of prompt/);
    await expect(schedule.execute({ message: 'x', at: '2026-03-28T09:00', timezone: 'Mars/Olympus' }, ctx)).rejects.toThrow(/IANA time zone/);
  });
});
