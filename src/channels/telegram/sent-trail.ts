/**
 * What the bot has posted in each Telegram chat, kept in the store so that an
 * answer part whose sending a crash cut short can be looked for before it is
 * sent again. The Bot API can neither read a chat nor recognise a message
 * sent twice, but it tells, for a message id, whether the bot can edit it and
 * whether an edit to a given text would change anything (TelegramOutbound's
 * search). Every post is put on record twice:
 *
 * - right before its request leaves (after the chat's pacing, so a post that
 *   died waiting its turn is not pending), as pending under its name, with
 *   the highest message id known in the chat then (the part, if it went out,
 *   came after);
 * - once Telegram has accepted it, by its message id (and no longer pending),
 *   with its name when it is a part of a named answer.
 *
 * So after a crash the record tells a named part that went out (by its name,
 * for a crash after this record and before the caller's own), names the one
 * post that may have gone out unrecorded, and the posts of the bot that a
 * search must leave alone. A search is safe only when no other post of the
 * chat is pending: an unknown bot message could otherwise be overwritten by
 * the probe.
 */
import { z } from 'zod';
import type { Logger } from '../../log.js';
import type { ChannelState } from '../types.js';

/** Message ids of the bot's latest posts kept per chat. */
const KEPT_IDS = 32;
/**
 * Named parts kept per chat by name: a name is needed only in the moment
 * between this record and the answer's own ledger, and Telegram lets a chat
 * take about one message a second.
 */
const KEPT_NAMES = 8;
/** A post pending longer than this died with its process long ago; its entry is dropped. */
const PENDING_FOR_MS = 60 * 60 * 1_000;

const PendingSchema = z.object({ after: z.number().int(), at: z.number() });
const TrailSchema = z.object({
  sent: z.array(z.number().int()),
  pending: z.record(z.string(), PendingSchema),
  /** Message ids of the latest named parts, by name, oldest first. */
  named: z.record(z.string(), z.number().int()).default({}),
});

/** One chat's record. */
export type ChatTrail = z.infer<typeof TrailSchema>;
/** A post that may have gone out unrecorded. */
export type PendingPost = z.infer<typeof PendingSchema>;

/** What a search for a pending post may look at. */
export interface SearchPlan {
  kind: 'search';
  /** The highest message id known in the chat when the post was begun. */
  after: number;
  /** The bot's recorded posts: not to be probed. */
  known: ReadonlySet<number>;
}

/** Where a part of a resumed answer stands: sent as message `id`, or to be looked for as the search plan says. */
export type PartLookup = { kind: 'sent'; id: number } | SearchPlan;

/** The per-chat records of the bot's posts; every failure of the store is logged and tolerated. */
export class SentTrail {
  constructor(
    private readonly state: ChannelState,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Puts a post on record as pending, before it is sent. */
  async begin(chatId: string, name: string, knownId: number): Promise<void> {
    await this.change(chatId, (trail) => {
      const after = Math.max(knownId, ...trail.sent);
      if (after > 0) trail.pending[name] = { after, at: this.now() };
    });
  }

  /** Records the message id Telegram gave a post; under its name too when it is `named` (a part of a named answer). */
  async done(chatId: string, name: string, messageId: number, named = false): Promise<void> {
    await this.change(chatId, (trail) => {
      delete trail.pending[name];
      trail.sent = [...trail.sent.filter((id) => id !== messageId), messageId].sort((a, b) => a - b).slice(-KEPT_IDS);
      if (named) {
        delete trail.named[name];
        trail.named[name] = messageId;
        trail.named = Object.fromEntries(Object.entries(trail.named).slice(-KEPT_NAMES));
      }
    });
  }

  /** Drops a pending post that Telegram refused (it did not go out). */
  async refused(chatId: string, name: string): Promise<void> {
    await this.change(chatId, (trail) => void delete trail.pending[name]);
  }

  /**
   * Where the part `name` stands: sent as a recorded message, or pending and
   * to be looked for. Undefined when it was never begun, or when a search is
   * unsafe because another post of the chat is pending too.
   */
  async lookup(chatId: string, name: string): Promise<PartLookup | undefined> {
    let trail: ChatTrail | undefined;
    try {
      trail = this.parse(await this.state.get(keyOf(chatId)));
    } catch (error) {
      this.log.warn({ err: error }, 'telegram: record of sent messages not read; sending the part again');
      return undefined;
    }
    const sentAs = trail?.named[name];
    if (sentAs !== undefined) return { kind: 'sent', id: sentAs };
    const mine = trail?.pending[name];
    if (!trail || !mine || !this.fresh(mine)) return undefined;
    const others = Object.entries(trail.pending).filter(([other, post]) => other !== name && this.fresh(post));
    if (others.length) {
      this.log.warn({ pending: others.length + 1 }, 'telegram: another message of the chat may have gone out unrecorded too; sending the part again rather than look for it');
      return undefined;
    }
    return { kind: 'search', after: mine.after, known: new Set(trail.sent) };
  }

  private async change(chatId: string, edit: (trail: ChatTrail) => void): Promise<void> {
    try {
      await this.state.update?.(keyOf(chatId), (current) => {
        const trail = this.parse(current) ?? { sent: [], pending: {}, named: {} };
        trail.pending = Object.fromEntries(Object.entries(trail.pending).filter(([, post]) => this.fresh(post)));
        edit(trail);
        return trail;
      });
    } catch (error) {
      this.log.warn({ err: error }, 'telegram: record of sent messages not updated');
    }
  }

  private parse(value: unknown): ChatTrail | undefined {
    const parsed = TrailSchema.safeParse(value);
    return parsed.success ? parsed.data : undefined;
  }

  private fresh(post: PendingPost): boolean {
    return post.at > this.now() - PENDING_FOR_MS;
  }
}

function keyOf(chatId: string): string {
  return `sent:${chatId}`;
}
