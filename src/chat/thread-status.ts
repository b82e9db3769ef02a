/**
 * What `/status` says about a thread: what it is doing, its model, its history
 * and usage, and the messages waiting.
 */
import type { PendingApproval } from '../engine/approval-book.js';
import { formatElapsed } from '../engine/elapsed.js';
import type { TurnActivity } from './presenter.js';
import type { AgentServices } from '../engine/services.js';
import type { ThreadRunner } from './thread-runner.js';

/** The status lines of a thread; `runner` and `pending` as this instance knows them. */
export async function describeThread(services: AgentServices, key: string, runner: ThreadRunner | undefined, pending: PendingApproval | undefined): Promise<string> {
  const record = await services.history.get(key);
  const state = pending
    ? pending.kind === 'loop'
      ? `waiting for ${pending.requester.name} to say whether I should go on`
      : `waiting for ${pending.requester.name} to approve \`${pending.call.name}\``
    : runner?.running
      ? workingText(runner.running.presenter.activity(), runner.running.iteration, services.config.agent.maxToolIterations)
      : runner?.busy
        ? 'waiting for a free slot'
        : 'idle';
  const lines = [`State: ${state}.`, `Model: ${services.models.nameFor(record?.model)}.`];
  if (record) {
    lines.push(`History: ${count(record.messages.length, 'message')} over ${count(record.turns, 'turn')}.`);
    const u = record.usage;
    lines.push(`This thread: ${u.inputTokens.toLocaleString('en-US')} in / ${u.outputTokens.toLocaleString('en-US')} out tokens, ${services.models.find(services.models.nameFor(record.model))?.price ? `$${u.costUsd.toFixed(4)}` : 'price unknown'}.`);
  }
  if (runner?.queuedMessages) lines.push(`Waiting: ${count(runner.queuedMessages, 'message')}.`);
  return lines.join('\n');
}

/** "3 turns", "1 turn". */
function count(n: number, noun: string): string {
  return `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;
}

/** What a running turn is doing, for how long, and at which step. */
function workingText(activity: TurnActivity, step: number, maxSteps: number): string {
  const seconds = Math.floor((Date.now() - activity.since) / 1_000);
  return `${activity.what} for ${formatElapsed(seconds)} (step ${Math.max(step, 1)} of at most ${maxSteps})`;
}
