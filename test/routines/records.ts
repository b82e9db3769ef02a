/**
 * Routine records as the schedule tool stores them, for tests that write the
 * store directly or fire a routine by hand.
 */
import type { Routine } from '../../src/routines/routine.js';
import { testDm } from '../support/test-channel.js';

/** A reminder in its owner's DM, firing every day from `nextAt`. */
export function reminderRecord(id: string, text: string, nextAt: number, owner = 'test:owner', ownerName = 'Ada'): Routine {
  return {
    id,
    name: text,
    owner,
    ownerName,
    origin: { channel: 'test', chatId: testDm(owner.slice(owner.indexOf(':') + 1)).chatId, kind: 'dm', scope: 'global' },
    schedule: { kind: 'every', everyMs: 86_400_000, from: nextAt },
    timezone: 'UTC',
    action: { kind: 'message', text },
    tools: [],
    enabled: true,
    nextAt,
    skipped: [],
    createdAt: nextAt - 86_400_000,
  };
}
