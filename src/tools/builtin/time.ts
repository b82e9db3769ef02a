/**
 * The `time` tool: the current date and time, in UTC and optionally in an
 * IANA time zone.
 */
import { z } from 'zod';
import { ToolError } from '../../errors.js';
import type { Tool } from '../types.js';

const parameters = z.object({
  timezone: z.string().max(64).optional().describe('IANA time zone such as "Europe/Paris" or "America/New_York"; default UTC'),
});

/** Creates the time tool; `clock` returns milliseconds since the epoch (tests pin it). */
export function timeTool(clock: () => number = Date.now): Tool<typeof parameters> {
  return {
    name: 'time',
    description: 'Get the current date and time, optionally in a given IANA time zone.',
    parameters,
    readOnly: true,
    requiresApproval: () => 'never',
    timeoutMs: 5_000,
    async execute({ timezone }) {
      const now = new Date(clock());
      const zone = timezone?.trim() || 'UTC';
      return `${now.toISOString()} (UTC)\n${formatIn(now, zone)} (${zone})`;
    },
  };
}

function formatIn(date: Date, timeZone: string): string {
  try {
    return new Intl.DateTimeFormat('en-GB', { timeZone, dateStyle: 'full', timeStyle: 'long' }).format(date);
  } catch {
    throw new ToolError(`unknown time zone "${timeZone}". Use an IANA name such as "Europe/Berlin" or "Asia/Tokyo".`);
  }
}
