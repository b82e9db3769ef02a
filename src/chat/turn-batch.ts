/**
 * Which waiting messages a turn reads. A turn acts with one person's authority:
 * their tool permissions, their budget, the owner of what it creates. In a DM
 * every message is that person's, so a turn reads all that wait and takes in
 * those that arrive while it runs. In a group a turn reads one sender's
 * messages only: a message of someone else becomes a turn of its own, which
 * acts as its sender, after the turns of the messages written before it.
 *
 * The other way to keep authority whole, a turn that reads several people and
 * acts with what they may all do, was not taken: it would need every check
 * (policy, permissions, budgets, grants of jobs) to intersect people, and a
 * person could not tell from the answer whose request it served.
 */
import type { ChatKind, InboundMessage, Sender } from '../channels/types.js';

/**
 * Takes from the front of `waiting` (oldest first) the messages one turn reads:
 * all of them in a DM; in a group, the first sender's messages up to the first
 * of someone else's. With `speaker`, the turn is already theirs (a turn that
 * goes on after a restart): in a group it takes only messages of theirs.
 *
 * @example
 * // waiting in a group: Ada, Ada, Bob, Ada
 * takeTurnBatch(waiting, 'group'); // => Ada, Ada (Bob, Ada still wait)
 */
export function takeTurnBatch(waiting: InboundMessage[], kind: ChatKind, speaker?: Sender): InboundMessage[] {
  if (kind === 'dm') return waiting.splice(0);
  const first = speaker ?? waiting[0]?.sender;
  let count = 0;
  while (count < waiting.length && first && sameSender(waiting[count]!.sender, first)) count += 1;
  return waiting.splice(0, count);
}

/**
 * Whether `message`, arriving while a turn for `speaker` runs, joins that turn.
 * In a group only the speaker's own, and only when no message of another waits
 * (it would be read before theirs); otherwise it waits in line.
 */
export function joinsRunningTurn(kind: ChatKind, speaker: Sender, message: InboundMessage, waiting: readonly InboundMessage[]): boolean {
  if (kind === 'dm') return true;
  return sameSender(message.sender, speaker) && waiting.length === 0;
}

/** Whether two senders are the same person (names may change; ids do not). */
function sameSender(a: Sender, b: Sender): boolean {
  return a.id === b.id;
}
