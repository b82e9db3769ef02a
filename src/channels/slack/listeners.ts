/**
 * The Bolt listeners: what Slack delivers, routed to the intakes. Each one
 * acknowledges first (Bolt acknowledges Events API envelopes itself; commands
 * and button presses are acknowledged here before any work), so Slack's
 * three-second deadline is met however long a name look-up takes.
 */
import type { App } from '@slack/bolt';
import type { Logger } from '../../log.js';
import type { ApprovalPressIntake, BlockActionsPayload, PressedButton } from './approval-press.js';
import type { MessageIntake, SlackMessageEvent } from './inbound.js';
import type { RespondFn, SlashCommandIntake, SlashCommandPayload } from './slash-command.js';

/** The intakes the listeners feed. */
export interface ListenerTargets {
  messages: MessageIntake;
  commands: SlashCommandIntake;
  presses: ApprovalPressIntake;
  /** The slash command as configured, e.g. `/pincer`. */
  slashCommand: string;
  log: Logger;
}

/** Registers every listener the adapter needs on `app`. */
export function registerListeners(app: App, targets: ListenerTargets): void {
  const { log } = targets;
  const onMessage = async ({ event, body }: { event: unknown; body: { team_id?: string } }) => {
    await guard(log, 'message', () => targets.messages.handle(event as SlackMessageEvent, body.team_id));
  };
  app.event('message', onMessage);
  app.event('app_mention', onMessage);

  app.command(targets.slashCommand, async ({ ack, command, respond }) => {
    await ack();
    await guard(log, 'command', () => targets.commands.handle(command as SlashCommandPayload, respond as RespondFn));
  });

  // Every button: ours carry `pa:` payloads, and any other (a stale one) is answered as such, not left to time out.
  app.action(/.*/, async ({ ack, body, action }) => {
    await ack();
    if (body.type !== 'block_actions') return;
    await guard(log, 'button press', () =>
      targets.presses.handle(body as unknown as BlockActionsPayload, action as unknown as PressedButton),
    );
  });

  app.error(async (error) => {
    log.warn({ err: error }, 'slack: error in a Bolt listener');
  });
}

/** Logs a handler's failure instead of letting it reach Bolt, which has nothing better to do with it. */
async function guard(log: Logger, what: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    log.warn({ err: error }, `slack: could not handle a ${what}`);
  }
}
