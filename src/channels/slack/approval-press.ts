/**
 * A press of an approval button (`block_actions` whose action carries a
 * `pa:<id>:<y|a|n>` payload) becomes an InboundApprovalAnswer. Bolt has
 * acknowledged the press before this runs; the presser's notice goes out as an
 * ephemeral message in the prompt's conversation.
 */
import { decodeApprovalPayload } from '../approval-payload.js';
import { STALE_BUTTON, type InboundApprovalAnswer, type Reply } from '../types.js';
import { isAllowed, NOT_AVAILABLE } from './access.js';
import { chatInfoOf, chatKindOf } from './chat.js';
import { markdownToMrkdwn } from './render.js';
import type { IntakeDeps } from './inbound.js';
import type { SlackWebApi } from './web-api.js';

/** The fields of a `block_actions` payload the adapter reads. */
export interface BlockActionsPayload {
  user: { id: string; name?: string; username?: string; team_id?: string };
  team?: { id?: string } | null;
  channel?: { id?: string };
  container?: { channel_id?: string; message_ts?: string; thread_ts?: string };
  message?: { ts?: string; thread_ts?: string };
}

/** The pressed button. */
export interface PressedButton {
  action_id: string;
  value?: string;
}

/** What the press intake needs besides the shared intake deps. */
export interface PressDeps extends IntakeDeps {
  api: SlackWebApi;
}

/** Turns approval button presses into InboundApprovalAnswers. */
export class ApprovalPressIntake {
  constructor(private readonly deps: PressDeps) {}

  /**
   * Handles one press. The presser of a button that is not an approval button
   * of this bot (a stale one) is told so; a press without a conversation is
   * ignored.
   */
  async handle(payload: BlockActionsPayload, button: PressedButton): Promise<void> {
    const channelId = payload.channel?.id ?? payload.container?.channel_id;
    if (!channelId) return;
    const kind = await chatKindOf(channelId, undefined, this.deps.directory);
    const teamId = payload.team?.id ?? payload.user.team_id;
    const userId = payload.user.id;
    const threadTs = payload.message?.thread_ts ?? payload.container?.thread_ts;
    if (!isAllowed(this.deps.config, { teamId, channelId, userId, isDm: kind === 'dm' })) {
      await this.notifier(channelId, userId, threadTs)({ text: NOT_AVAILABLE });
      return;
    }
    const decoded = decodeApprovalPayload(button.value ?? button.action_id);
    if (!decoded) {
      await this.notifier(channelId, userId, threadTs)({ text: STALE_BUTTON });
      return;
    }
    const answer: InboundApprovalAnswer = {
      type: 'approval',
      chat: chatInfoOf({ channelId, kind, subId: threadTs, teamId }),
      sender: { id: userId, name: await this.nameOf(payload) },
      receivedAt: Date.now(),
      approvalId: decoded.approvalId,
      action: decoded.action,
      respond: this.notifier(channelId, userId, threadTs),
    };
    this.deps.push(answer);
  }

  private async nameOf(payload: BlockActionsPayload): Promise<string> {
    const name = await this.deps.directory.userName(payload.user.id);
    return name === payload.user.id ? (payload.user.name ?? payload.user.username ?? name) : name;
  }

  /** An ephemeral notice to the presser, sent at most once. */
  private notifier(channelId: string, userId: string, threadTs: string | undefined): (reply: Reply) => Promise<void> {
    let sent = false;
    return async (reply) => {
      if (sent) return;
      sent = true;
      await this.deps.api.postEphemeral(channelId, userId, markdownToMrkdwn(reply.text), threadTs);
    };
  }
}
