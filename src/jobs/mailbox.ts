/**
 * Which jobs may have mail. A job's mailbox is its stored record (`message`
 * writes there, on whichever instance the owner spoke to); reading it before
 * every model call would be a store round trip per step for a mailbox that is
 * nearly always empty. A step reads it only when a message was posted since
 * its last read (here, or on another instance, which says so), on the first
 * step of a run (mail may have come while no run was going), and at least
 * every {@link RECHECK_MS} in case a notice from another instance was lost.
 */
import type { Signals } from '../deployment/types.js';

/** The longest a run goes without reading its mailbox, should a notice be lost. */
export const RECHECK_MS = 10_000;

/** What the mailbox needs of the deployment: telling the other instances of mail, and hearing of theirs. */
export type MailNotices = Pick<Signals, 'mail' | 'onMail'>;

export class JobMailbox {
  /** Jobs with mail posted (or maybe waiting) since their last read. */
  private readonly flagged = new Set<string>();
  private readonly lastRead = new Map<string, number>();

  constructor(
    private readonly notices: MailNotices,
    private readonly now: () => number = Date.now,
  ) {
    notices.onMail((id) => this.flagged.add(id));
  }

  /** A message was written to `id`'s mailbox here: steps of it read it, here and on the other instances. */
  async posted(id: string): Promise<void> {
    this.flagged.add(id);
    await this.notices.mail(id);
  }

  /** A run of `id` starts: its first step reads the mailbox. */
  runStarted(id: string): void {
    this.flagged.add(id);
  }

  /** A run of `id` is over. */
  runEnded(id: string): void {
    this.flagged.delete(id);
    this.lastRead.delete(id);
  }

  /**
   * Whether a step of `id` must read its mailbox now; when it must, the read
   * counts as done from this moment (a message posted during it flags it again).
   */
  shouldRead(id: string): boolean {
    const due = this.flagged.has(id) || this.now() - (this.lastRead.get(id) ?? 0) >= RECHECK_MS;
    if (!due) return false;
    this.flagged.delete(id);
    this.lastRead.set(id, this.now());
    return true;
  }
}
