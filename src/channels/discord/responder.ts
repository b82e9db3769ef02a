/**
 * Answers one interaction within Discord's 3-second deadline. The agent's
 * answer is sent directly when it comes quickly; otherwise the interaction is
 * deferred after `deferAfterMs` and the answer arrives later as an edit or a
 * follow-up. Deferring late, not at once, lets a quick private answer still be
 * ephemeral: a deferral fixes whether the reply is ephemeral.
 */
import { MessageFlags, type MessageMentionOptions, type RepliableInteraction } from 'discord.js';
import type { Logger } from '../../log.js';
import type { Reply } from '../types.js';
import { toChannelError } from './errors.js';

/** Settings of a responder. */
export interface ResponderOptions {
  /** When to defer if the agent has not answered; must stay well under 3 s. */
  deferAfterMs: number;
  /** How long a deferred reply waits for its answer before it is removed (tokens last 15 min). */
  deferredLifetimeMs: number;
  /** Splits and redacts text into message parts. */
  render(text: string): string[];
  log: Logger;
}

type State = 'pending' | 'deferred' | 'answered' | 'closed';

const NO_PINGS: MessageMentionOptions = { parse: [], repliedUser: false };

/** The acknowledgement and answers of one interaction. */
export class InteractionResponder {
  private state: State = 'pending';
  private chain: Promise<void> = Promise.resolve();
  private readonly timers: NodeJS.Timeout[] = [];
  /**
   * How a late answer is acknowledged: a slash command shows "thinking…" (a
   * deferred reply), a button press leaves its message as it is (a deferred update).
   */
  private readonly mode: 'reply' | 'update';

  constructor(
    private readonly interaction: RepliableInteraction,
    private readonly options: ResponderOptions,
  ) {
    this.mode = interaction.isMessageComponent() ? 'update' : 'reply';
    this.schedule(options.deferAfterMs, () => this.defer());
  }

  /**
   * Shows `reply` to the user. Private replies, and every answer to a button
   * press, are ephemeral. Later calls become follow-ups.
   */
  respond(reply: Reply): Promise<void> {
    return this.enqueue(() => this.answer(reply)).catch((error: unknown) => {
      throw toChannelError(error, `answer interaction ${this.interaction.id}`);
    });
  }

  /** Whether nothing more will happen unless the agent answers again. */
  get settled(): boolean {
    return this.state === 'answered' || this.state === 'closed';
  }

  /** Cancels pending timers; called when the channel stops. */
  dispose(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.length = 0;
  }

  private async answer(reply: Reply): Promise<void> {
    const parts = this.options.render(reply.text);
    const ephemeral = Boolean(reply.private) || this.mode === 'update';
    const flags = ephemeral ? MessageFlags.Ephemeral : undefined;
    const [first, ...rest] = parts as [string, ...string[]];
    if (this.state === 'pending') {
      await this.interaction.reply({ content: first, flags, allowedMentions: NO_PINGS });
    } else if (this.state === 'deferred' && this.mode === 'reply' && !ephemeral) {
      await this.interaction.editReply({ content: first, allowedMentions: NO_PINGS });
    } else {
      await this.dropDeferredReply();
      rest.unshift(first);
    }
    this.state = 'answered';
    for (const content of rest) await this.interaction.followUp({ content, flags, allowedMentions: NO_PINGS });
  }

  private async defer(): Promise<void> {
    if (this.state !== 'pending') return;
    const interaction = this.interaction;
    if (interaction.isMessageComponent()) await interaction.deferUpdate();
    else await interaction.deferReply();
    this.state = 'deferred';
    if (this.mode === 'reply') this.schedule(this.options.deferredLifetimeMs, () => this.expire());
  }

  /** A public "thinking…" reply cannot turn ephemeral: remove it before a private follow-up. */
  private async dropDeferredReply(): Promise<void> {
    if (this.state !== 'deferred' || this.mode !== 'reply') return;
    await this.interaction.deleteReply().catch((error: unknown) => {
      this.options.log.warn({ err: error, interactionId: this.interaction.id }, 'could not remove a deferred reply');
    });
  }

  /** Nobody answered: remove "thinking…" rather than leave it forever. */
  private async expire(): Promise<void> {
    if (this.state !== 'deferred') return;
    await this.dropDeferredReply();
    this.state = 'closed';
  }

  private schedule(delayMs: number, task: () => Promise<void>): void {
    const timer = setTimeout(() => {
      this.enqueue(task).catch((error: unknown) => {
        this.options.log.warn({ err: error, interactionId: this.interaction.id }, 'could not acknowledge an interaction');
      });
    }, delayMs);
    timer.unref();
    this.timers.push(timer);
  }

  /** Runs tasks one at a time, so a deferral and an answer never race. */
  private enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.chain.then(task);
    this.chain = run.catch(() => undefined);
    return run;
  }
}
