/**
 * Why a turn was stopped, carried as the abort reason of its AbortController so
 * that the end of the turn can tell a person's /stop from a shutdown.
 */

/** By a person (/stop, /new) or by the process shutting down. */
export type StopReason = 'user' | 'shutdown';

/** The abort reason of a stopped turn. */
export class TurnStopped extends Error {
  override readonly name = 'TurnStopped';
  constructor(readonly reason: StopReason) {
    super(reason === 'shutdown' ? 'the bot is shutting down' : 'stopped by the user');
  }
}
