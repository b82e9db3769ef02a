/**
 * What a turn leaves on record for the process that takes it up after a crash
 * or a shutdown (the journal entry of a running turn, the name its answer goes
 * out under), and what the person and the model are told when it is resumed.
 */
import { toolResult } from '../llm/call-ids.js';
import type { ChatMessage } from '../llm/types.js';
import type { TurnState } from './chat-delegate.js';
import type { OpenTurn } from '../engine/history.js';

/** What people see when a shutdown interrupts their turn. */
export const SHUTDOWN_NOTICE = '⏹️ I have to pause here: the bot is restarting. I will pick this up again as soon as it is back.';

/** The one line people see when a turn resumes after the bot restarted in the middle of it. */
export const RESTART_NOTICE = '🔄 The bot restarted while I was working on this; picking up where I left off.';

/** Result of a call that was running when the process died: it may have taken effect. */
export const INTERRUPTED_RESULT =
  'Interrupted: the bot restarted while this call was running, so its result is unknown and it may or may not have taken effect. Do not simply run it again: check its effect first if that matters, and tell the user.';

/** Results for the calls of the last batch that have none (they were running when the process died). */
export function interruptedResults(messages: readonly ChatMessage[]): ChatMessage[] {
  const answered = new Set<string>();
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === 'tool') {
      answered.add(message.toolCallId);
      continue;
    }
    if (message.role !== 'assistant' || !message.toolCalls?.length) return [];
    return message.toolCalls.filter((call) => !answered.has(call.id)).map((call) => toolResult(call, INTERRUPTED_RESULT));
  }
  return [];
}

/** The journal entry of a turn that is running. */
export function openTurn(turn: TurnState): OpenTurn {
  const open: OpenTurn = { startedAt: Date.now(), userId: turn.userId, speaker: { id: turn.speaker.id, name: turn.speaker.name }, phase: 'running' };
  if (turn.replyTo !== undefined) open.replyTo = turn.replyTo;
  return open;
}

/** How a turn's answer is sent: a reply where it has one, under a name that is the same when a successor sends it again. */
export function answerOptions(turn: TurnState, thread: string, open: OpenTurn): { replyTo?: string; after?: string; idempotencyKey: string; resumed?: boolean } {
  return {
    ...(turn.replyTo ? { replyTo: turn.replyTo } : {}),
    ...(turn.answering ? { after: turn.answering } : {}),
    idempotencyKey: `answer:${thread}:${open.startedAt}`,
    ...(turn.resumed ? { resumed: true } : {}),
  };
}

/** The turn's last message as the person sees it: the journal's preface (what their voice message was heard as) on top. */
export function shownAnswer(open: Pick<OpenTurn, 'preface'> | undefined, text: string): string {
  return open?.preface ? `${open.preface}\n\n${text}` : text;
}

/** The name of the message that shows a turn's preface on its own, when the turn ends in an approval prompt. */
export function prefaceName(thread: string, open: OpenTurn): string {
  return `preface:${thread}:${open.startedAt}`;
}

/** The name of the restart notice of a turn: one notice, however often the restart is taken up again. */
export function restartNoticeName(thread: string, open: OpenTurn): string {
  return `restart:${thread}:${open.startedAt}`;
}
