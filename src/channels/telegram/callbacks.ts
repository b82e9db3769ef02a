/**
 * Button presses (callback queries). Telegram shows a spinner on the button
 * until the press is answered, so every press gets exactly one
 * answerCallbackQuery: the agent's notice as a toast when it responds in time,
 * an empty answer after a short delay otherwise.
 */
import type { Api } from 'grammy';
import type { CallbackQuery } from 'grammy/types';
import type { Logger } from '../../log.js';
import { decodeApprovalPayload } from '../approval-payload.js';
import { STALE_BUTTON, type InboundApprovalAnswer } from '../types.js';
import { chatInfoOf, senderOf, topicOf } from './chat.js';
import { describeError } from './errors.js';

/** Telegram's limit on a callback answer's text. */
const TOAST_LIMIT = 200;

/** What {@link CallbackAnswers} needs. */
export interface CallbackAnswersDeps {
  api: Api;
  log: Logger;
  /** A press not answered by the agent within this time is answered empty. */
  answerDelayMs: number;
  /** Delivers a notice that came too late for a toast, in the presser's private chat. */
  sendPrivate(userId: string, text: string): Promise<void>;
}

/** Turns presses into approval answers and makes sure each is acknowledged once. */
export class CallbackAnswers {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly deps: CallbackAnswersDeps) {}

  /** The approval answer of a press, or undefined (after a "no longer valid" toast) for other buttons. */
  toApprovalAnswer(query: CallbackQuery, now: number): InboundApprovalAnswer | undefined {
    const payload = decodeApprovalPayload(query.data ?? '');
    const chat = query.message ? chatInfoOf(query.message.chat, topicOf(query.message)) : undefined;
    if (!payload || !chat) {
      void this.answer(query.id, STALE_BUTTON);
      return undefined;
    }
    const respond = this.oneShot(query);
    return {
      type: 'approval',
      chat,
      sender: senderOf(query.from),
      receivedAt: now,
      approvalId: payload.approvalId,
      action: payload.action,
      respond: (reply) => respond(reply.text),
    };
  }

  /** Acknowledges a press pincer does not act on (e.g. from someone not allowed). */
  ignore(query: CallbackQuery): void {
    void this.answer(query.id);
  }

  /** Cancels the pending delayed answers; the channel is stopping. */
  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /**
   * The respond function of one press: the first of (agent's notice, delay)
   * answers the query; a notice arriving after the delay goes to the private chat.
   */
  private oneShot(query: CallbackQuery): (text: string) => Promise<void> {
    let answered = false;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      answered = true;
      void this.answer(query.id);
    }, this.deps.answerDelayMs);
    this.timers.add(timer);
    return async (text) => {
      if (!answered) {
        answered = true;
        clearTimeout(timer);
        this.timers.delete(timer);
        await this.answer(query.id, text);
      } else if (text) {
        await this.deps.sendPrivate(String(query.from.id), text).catch((error: unknown) => {
          this.deps.log.warn({ error: describeError(error) }, 'telegram: late button notice not delivered');
        });
      }
    };
  }

  private async answer(queryId: string, text?: string): Promise<void> {
    const toast = text ? { text: truncate(text, TOAST_LIMIT), show_alert: false } : {};
    try {
      await this.deps.api.answerCallbackQuery(queryId, toast);
    } catch (error) {
      this.deps.log.warn({ error: describeError(error) }, 'telegram: answerCallbackQuery failed');
    }
  }
}

function truncate(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}
