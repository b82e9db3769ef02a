/**
 * Why a turn was stopped, carried as the abort reason of its AbortController so
 * that the end of the turn can tell a person's /stop from a shutdown.
 */

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
