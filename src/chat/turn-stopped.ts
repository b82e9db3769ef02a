/**
 * Why a turn was stopped, carried as the abort reason of its AbortController so
 * that the end of the turn can tell a person's /stop from a shutdown.
 */
import type { ThreadHistory } from '../engine/history.js';

/**
 * By a person (/stop, /new), by the process shutting down, or by a handover:
 * this instance lost the thread's lease, and the instance that took it over
 * resumes the turn and speaks to the person.
 */
export type StopReason = 'user' | 'shutdown' | 'handover';

const MESSAGES: Record<StopReason, string> = {
  user: 'stopped by the user',
  shutdown: 'the bot is shutting down',
  handover: 'another instance took the conversation over',
};

/** The abort reason of a stopped turn. */
export class TurnStopped extends Error {
  override readonly name = 'TurnStopped';
  constructor(readonly reason: StopReason) {
    super(MESSAGES[reason]);
  }
}

/**
 * Whether the turn may still act: run its next tool batch, send its next
 * message. Always in one process; where instances share the store, only while
 * this one's lease on the thread is current. A turn whose lease lapsed is
 * stopped as handed over, without a word: the instance that took the thread
 * over resumes it.
 */
export async function stillHeld(turn: { record: { key: string }; abort: AbortController }, history: Pick<ThreadHistory, 'holdsLease'>): Promise<boolean> {
  if (await history.holdsLease(turn.record.key)) return true;
  if (!turn.abort.signal.aborted) turn.abort.abort(new TurnStopped('handover'));
  return false;
}
