/**
 * When a routine fires (SPEC section 13): once `at` an ISO-8601 time, `every`
 * a duration (optionally from a start time), or on a 5-field `cron`
 * expression, each in an IANA time zone. Cron times and DST are croner's
 * (a time that does not exist on the day of a change fires at the next
 * valid minute, one that exists twice fires once). Everything here is pure:
 * "now" is a parameter, so tests run on a fixed clock.
 */
import { Cron } from 'croner';
import { z } from 'zod';

/** A routine's schedule, exactly one kind. */
export const ScheduleSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('at'), at: z.number() }),
  z.object({ kind: z.literal('every'), everyMs: z.number().int().positive(), from: z.number() }),
  z.object({ kind: z.literal('cron'), cron: z.string() }),
]);
export type Schedule = z.infer<typeof ScheduleSchema>;

/** What someone asks for (the `schedule` tool's arguments). */
export interface ScheduleRequest {
  at?: string | undefined;
  every?: string | undefined;
  /** Start of an `every` schedule (ISO-8601); default now. */
  from?: string | undefined;
  cron?: string | undefined;
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/**
 * A duration such as `30s`, `30m`, `2h`, `1d`, `1h30m`, in milliseconds.
 * @example parseDuration('1h30m') // 5_400_000
 */
export function parseDuration(text: string): number | undefined {
  const compact = text.trim().toLowerCase().replace(/\s+/g, '');
  if (!/^(\d+(\.\d+)?[smhdw])+$/.test(compact)) return undefined;
  let total = 0;
  for (const [, amount, unit] of compact.matchAll(/(\d+(?:\.\d+)?)([smhdw])/g)) total += Number(amount) * UNITS[unit!]!;
  return total > 0 ? Math.round(total) : undefined;
}

/** Whether `zone` is an IANA time zone this runtime knows. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The schedule of a request, or why it is not one. */
export function parseSchedule(request: ScheduleRequest, timezone: string, now: number): { ok: true; schedule: Schedule } | { ok: false; error: string } {
  const given = [request.at, request.every, request.cron].filter((value) => value !== undefined && value !== '');
  if (given.length !== 1) return { ok: false, error: 'give exactly one of at (a time), every (a duration such as 30m) or cron (5 fields).' };
  if (request.at) {
    const at = parseTime(request.at, timezone);
    if (at === undefined) return { ok: false, error: `"${request.at}" is not an ISO-8601 time such as 2026-05-01T09:00 or 2026-05-01T09:00:00Z.` };
    if (at <= now) return { ok: false, error: `${request.at} is in the past.` };
    return { ok: true, schedule: { kind: 'at', at } };
  }
  if (request.every) {
    const everyMs = parseDuration(request.every);
    if (!everyMs) return { ok: false, error: `"${request.every}" is not a duration such as 30s, 30m, 2h or 1d.` };
    const from = request.from ? parseTime(request.from, timezone) : now;
    if (from === undefined) return { ok: false, error: `"${request.from}" is not an ISO-8601 time.` };
    return { ok: true, schedule: { kind: 'every', everyMs, from } };
  }
  const cron = request.cron!.trim().replace(/\s+/g, ' ');
  if (cron.split(' ').length !== 5) return { ok: false, error: `"${cron}" is not a 5-field cron expression (minute hour day-of-month month day-of-week).` };
  try {
    new Cron(cron, { timezone, paused: true });
  } catch (error) {
    return { ok: false, error: `"${cron}" is not a valid cron expression: ${error instanceof Error ? error.message : String(error)}.` };
  }
  return { ok: true, schedule: { kind: 'cron', cron } };
}

/** The first firing strictly after `after`, or undefined when there is none (a past `at`). */
export function nextFiring(schedule: Schedule, timezone: string, after: number): number | undefined {
  switch (schedule.kind) {
    case 'at':
      return schedule.at > after ? schedule.at : undefined;
    case 'every': {
      if (schedule.from > after) return schedule.from;
      const periods = Math.floor((after - schedule.from) / schedule.everyMs) + 1;
      return schedule.from + periods * schedule.everyMs;
    }
    case 'cron':
      return new Cron(schedule.cron, { timezone, paused: true }).nextRun(new Date(after))?.getTime();
  }
}

/** The next `count` firings after `after`. */
export function nextFirings(schedule: Schedule, timezone: string, after: number, count: number): number[] {
  const times: number[] = [];
  let from = after;
  while (times.length < count) {
    const next = nextFiring(schedule, timezone, from);
    if (next === undefined) break;
    times.push(next);
    from = next;
  }
  return times;
}

/** The shortest gap between two firings among the next few: what the minimum interval is checked against. */
export function shortestGap(schedule: Schedule, timezone: string, now: number): number | undefined {
  if (schedule.kind === 'at') return undefined;
  if (schedule.kind === 'every') return schedule.everyMs;
  const times = nextFirings(schedule, timezone, now, 10);
  let gap: number | undefined;
  for (let i = 1; i < times.length; i++) gap = Math.min(gap ?? Infinity, times[i]! - times[i - 1]!);
  return gap;
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/**
 * The schedule in plain words.
 * @example describeSchedule({ kind: 'cron', cron: '0 9 * * 1-5' }, 'Europe/Berlin', now) // 'every weekday at 09:00 Europe/Berlin'
 */
export function describeSchedule(schedule: Schedule, timezone: string, now: number): string {
  switch (schedule.kind) {
    case 'at':
      return `once, ${formatTime(schedule.at, timezone, now)}`;
    case 'every':
      return `every ${describeDuration(schedule.everyMs)}${schedule.from > now ? `, from ${formatTime(schedule.from, timezone, now)}` : ''}`;
    case 'cron':
      return describeCron(schedule.cron, timezone);
  }
}

/** A time as people read it, in `timezone`: "tomorrow at 14:30 UTC", "on Fri 5 Jun 2026 at 09:00 Europe/Berlin". */
export function formatTime(time: number, timezone: string, now: number): string {
  const day = (at: number) => new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
  const clock = new Intl.DateTimeFormat('en-GB', { timeZone: timezone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(time);
  const label =
    day(time) === day(now)
      ? 'today'
      : day(time) === day(now + 86_400_000)
        ? 'tomorrow'
        : `on ${new Intl.DateTimeFormat('en-GB', { timeZone: timezone, weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' }).format(time)}`;
  return `${label} at ${clock} ${timezone}`;
}

function describeDuration(ms: number): string {
  for (const [size, name] of [[UNITS.w!, 'week'], [UNITS.d!, 'day'], [UNITS.h!, 'hour'], [UNITS.m!, 'minute'], [UNITS.s!, 'second']] as const) {
    if (ms % size === 0) {
      const count = ms / size;
      return count === 1 ? name : `${count} ${name}s`;
    }
  }
  return `${ms} ms`;
}

/** Common cron shapes in words; anything else is quoted. */
function describeCron(cron: string, timezone: string): string {
  const [minute, hour, dayOfMonth, month, dayOfWeek] = cron.split(' ') as [string, string, string, string, string];
  if (!/^\d+$/.test(minute) || !/^\d+$/.test(hour) || month !== '*') return `on the cron schedule \`${cron}\` (${timezone})`;
  const at = `at ${hour.padStart(2, '0')}:${minute.padStart(2, '0')} ${timezone}`;
  if (dayOfMonth === '*' && dayOfWeek === '*') return `every day ${at}`;
  if (dayOfMonth === '*' && dayOfWeek === '1-5') return `every weekday ${at}`;
  if (dayOfMonth === '*' && (dayOfWeek === '0,6' || dayOfWeek === '6,0')) return `every weekend day ${at}`;
  if (dayOfMonth === '*' && /^[0-7]$/.test(dayOfWeek)) return `every ${WEEKDAYS[Number(dayOfWeek) % 7]} ${at}`;
  if (/^\d+$/.test(dayOfMonth) && dayOfWeek === '*') return `on day ${dayOfMonth} of each month ${at}`;
  return `on the cron schedule \`${cron}\` (${timezone})`;
}

/**
 * An ISO-8601 time; one without an offset is read in `timezone`.
 * @example parseTime('2026-05-01T09:00', 'Europe/Berlin') // 2026-05-01T07:00:00Z
 */
export function parseTime(text: string, timezone: string): number | undefined {
  const trimmed = text.trim();
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i.test(trimmed)) return undefined;
  if (/(Z|[+-]\d{2}:?\d{2})$/i.test(trimmed)) {
    const time = Date.parse(trimmed.replace(' ', 'T'));
    return Number.isNaN(time) ? undefined : time;
  }
  const [datePart, timePart = '00:00'] = trimmed.split(/[T ]/) as [string, string?];
  const [year, month, day] = datePart.split('-').map(Number) as [number, number, number];
  const [hour, minute, second = 0] = timePart.split(':').map(Number) as [number, number, number?];
  // The wall time in `timezone`: start from it as UTC and correct by the zone's offset at that moment.
  const guess = Date.UTC(year, month - 1, day, hour, minute, Math.floor(second));
  if (Number.isNaN(guess)) return undefined;
  const offset = offsetOf(guess, timezone);
  const first = guess - offset;
  // Near a DST change the offset at the result may differ: correct once more.
  return guess - offsetOf(first, timezone);
}

/** The zone's offset from UTC at `time`, in milliseconds. */
function offsetOf(time: number, timezone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' }).formatToParts(time);
  const get = (type: string) => Number(parts.find((part) => part.type === type)?.value);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return asUtc - Math.floor(time / 1000) * 1000;
}
