/**
 * Routes one Telegram update to the agent's event queue. Routing only queues:
 * nothing here waits for a turn, so one slow conversation never holds up the
 * updates of another. Updates from outside the allowlists stop here: a
 * refused DM may get a reply, a refused button press gets a "not available" toast.
 */
import type { Update } from 'grammy/types';
import type { Logger } from '../../log.js';
import type { EventQueue } from '../event-queue.js';
import type { InboundEvent } from '../types.js';
import { NOT_AVAILABLE } from '../access.js';
import type { AccessPolicy } from './access.js';
import type { CallbackAnswers } from './callbacks.js';
import { toInboundEvent, type BotIdentity } from './inbound.js';

/** What {@link UpdateRouter} needs. */
export interface UpdateRouterDeps {
  bot: BotIdentity;
  knownCommands: ReadonlySet<string>;
  access: AccessPolicy;
  callbacks: CallbackAnswers;
  queue: EventQueue<InboundEvent>;
  /** The agent acknowledges stored events: the update is confirmed to Telegram only after that. */
  acknowledged?: boolean;
  log: Logger;
  /** Sends the denied-access reply into a private chat. */
  sendDenied(chatId: string, text: string): Promise<void>;
}

/** The longest an update's confirmation waits for the agent to store its event. */
const ACK_TIMEOUT_MS = 10_000;

/** Turns updates into queued inbound events. */
export class UpdateRouter {
  constructor(private readonly deps: UpdateRouterDeps) {}

  /**
   * Queues the event of `update`, if it carries one pincer serves; resolves once
   * the agent has it stored, when it acknowledges events.
   */
  async route(update: Update, now = Date.now()): Promise<void> {
    if (update.message) await this.routeMessage(update.message, now);
    else if (update.callback_query) await this.routeCallback(update.callback_query, now);
  }

  private async routeMessage(message: NonNullable<Update['message']>, now: number): Promise<void> {
    const from = message.from;
    if (!from || from.is_bot) return;
    const event = toInboundEvent(message, { bot: this.deps.bot, knownCommands: this.deps.knownCommands, now });
    const kind = message.chat.type === 'private' ? 'dm' : 'group';
    if (!this.deps.access.allows(kind, String(message.chat.id), String(from.id))) {
      if (kind === 'dm') this.replyDenied(String(message.chat.id), String(from.id), now, event?.type === 'command');
      this.deps.log.debug({ chatId: message.chat.id, userId: from.id }, 'telegram: message from outside the allowlists ignored');
      return;
    }
    if (!event) return;
    if (this.deps.acknowledged) await this.deps.queue.pushAcknowledged(event, ACK_TIMEOUT_MS);
    else this.deps.queue.push(event);
  }

  private async routeCallback(query: NonNullable<Update['callback_query']>, now: number): Promise<void> {
    if (query.from.is_bot) {
      this.deps.callbacks.ignore(query);
      return;
    }
    const event = this.deps.callbacks.toApprovalAnswer(query, now);
    if (!event) return;
    // Refused: the press is answered with a toast, as the agent's notices are.
    if (!this.deps.access.allows(event.chat.kind, event.chat.chatId, event.sender.id)) void event.respond({ text: NOT_AVAILABLE });
    else if (this.deps.acknowledged) await this.deps.queue.pushAcknowledged(event, ACK_TIMEOUT_MS);
    else this.deps.queue.push(event);
  }

  private replyDenied(chatId: string, userId: string, now: number, command: boolean): void {
    void this.deps.access
      .deniedReplyFor(userId, now, command)
      .then((text) => (text ? this.deps.sendDenied(chatId, text) : undefined))
      .catch((error: unknown) => {
        this.deps.log.warn({ error: error instanceof Error ? error.message : String(error) }, 'telegram: denied-access reply failed');
      });
  }
}
