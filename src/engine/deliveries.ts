/**
 * Which parts of an answer have gone out. Each answer is named (SendOptions
 * idempotencyKey), and every part the platform accepts is put on record in the
 * store at once, before the next part goes. An answer sent again (a successor
 * instance, or this process after a restart, resuming a turn that died while
 * sending) skips the parts on record. On a platform that recognises nothing
 * sent twice (Telegram) a part a crash cut short between the platform
 * accepting it and this write is looked for by the channel itself
 * (channels/telegram/sent-trail.ts).
 */
import { z } from 'zod';
import type { PartLedger } from '../channels/types.js';
import type { Logger } from '../log.js';
import type { Namespace, Store } from '../store/store.js';

/** How long a record outlives a crash that kept it from being forgotten. */
const KEPT_MS = 24 * 60 * 60 * 1_000;

/** How long a completed message is remembered as sent: longer than anything sends it again. */
const DONE_KEPT_MS = 7 * 24 * 60 * 60 * 1_000;

/** Platform ids of the parts sent, by position. */
const SentSchema = z.record(z.string(), z.string());

/** A ledger kept in memory only: the attempts of one send in this process. */
export function memoryLedger(): PartLedger {
  const sent = new Map<number, string>();
  return {
    sent,
    record: (index, id) => {
      sent.set(index, id);
      return Promise.resolve();
    },
  };
}

/** The stored ledgers of named answers, and the names of messages sent whole. */
export class DeliveryLog {
  private readonly records: Namespace<Record<string, string>>;
  /** Platform ids of each named message that went out whole. */
  private readonly done: Namespace<string[]>;
  /** Named sends (a file) whose platform call has started and not ended: a crash leaves them so. */
  private readonly begun: Namespace<number>;
  /** Answers with a record in the store, so that forgetting the others costs nothing. */
  private readonly recorded = new Set<string>();

  constructor(
    store: Store,
    private readonly log: Logger,
  ) {
    this.records = store.namespace('delivered', SentSchema);
    this.done = store.namespace('delivered-whole', z.array(z.string()));
    this.begun = store.namespace('delivery-begun', z.number());
  }

  /**
   * Puts on record that the send named `key` is about to reach the platform,
   * for a send that cannot be told apart from a repeat afterwards (a file).
   * False when the record could not be written.
   */
  async begin(key: string): Promise<boolean> {
    try {
      await this.begun.set(key, Date.now(), KEPT_MS);
      return true;
    } catch (error) {
      this.log.warn({ err: error }, 'the start of a send not put on record');
      return false;
    }
  }

  /** Whether a send named `key` started and neither ended nor failed (a crash cut it short); a store that cannot say counts as not. */
  async interrupted(key: string): Promise<boolean> {
    try {
      return (await this.begun.get(key)) !== undefined;
    } catch (error) {
      this.log.warn({ err: error }, 'whether a send was cut short not read');
      return false;
    }
  }

  /** The send named `key` ended (sent, or refused): its start is no longer on record. */
  async ended(key: string): Promise<void> {
    try {
      await this.begun.delete(key);
    } catch (error) {
      this.log.warn({ err: error }, 'the start of a send not dropped; it expires');
    }
  }

  /** The platform ids of the message named `key` if it went out whole (see {@link complete}); a store that cannot say counts as not. */
  async completed(key: string): Promise<string[] | undefined> {
    try {
      return await this.done.get(key);
    } catch (error) {
      this.log.warn({ err: error }, 'whether a named message went out not read; sending it');
      return undefined;
    }
  }

  /** Puts on record that the message named `key` went out whole as `ids`: sending it again posts nothing. Its part ledger can go. */
  async complete(key: string, ids: readonly string[]): Promise<void> {
    try {
      await this.done.set(key, [...ids], DONE_KEPT_MS);
    } catch (error) {
      this.log.warn({ err: error }, 'a sent message not put on record as sent');
      return;
    }
    await this.forget(key);
  }

  /**
   * The ledger of the answer named `key`. Only a `resumed` answer can have
   * parts on record, so only then is the store read; when it cannot be, the
   * answer is sent whole (a repeat, never a loss).
   */
  async ledger(key: string, resumed: boolean): Promise<PartLedger> {
    const sent = new Map<number, string>();
    if (resumed) {
      try {
        for (const [index, id] of Object.entries((await this.records.get(key)) ?? {})) sent.set(Number(index), id);
      } catch (error) {
        this.log.warn({ err: error }, 'parts already sent of a resumed answer not read; sending it whole');
      }
      if (sent.size) {
        this.recorded.add(key);
        this.log.info({ parts: sent.size }, 'parts of a resumed answer went out before; not sending them again');
      }
    }
    return {
      sent,
      record: async (index, id) => {
        sent.set(index, id);
        this.recorded.add(key);
        try {
          await this.records.set(key, Object.fromEntries(sent), KEPT_MS);
        } catch (error) {
          this.log.warn({ err: error }, 'a sent part of an answer not put on record');
        }
      },
    };
  }

  /** Drops an answer's record once the turn that sent it is closed on record. */
  async forget(key: string): Promise<void> {
    if (!this.recorded.delete(key)) return;
    try {
      await this.records.delete(key);
    } catch (error) {
      this.log.warn({ err: error }, 'record of a sent answer not dropped; it expires');
    }
  }
}
