/**
 * What the fake Slack delivers, shaped as Slack shapes it: Events API
 * `event_callback` bodies, `block_actions` interaction payloads and slash
 * command payloads, wrapped in Socket Mode envelopes with an `envelope_id`.
 */
import type { FakeMessage, FakeWorkspace } from './workspace.js';

/** A Socket Mode envelope type. */
export type EnvelopeType = 'events_api' | 'interactive' | 'slash_commands';

/** One delivery: its envelope id, its type and the payload Slack would send. */
export interface Envelope {
  envelope_id: string;
  type: EnvelopeType;
  payload: Record<string, unknown>;
  accepts_response_payload: boolean;
  /** Events API deliveries: 0 the first time, then how many times Slack has sent it again. */
  retry_attempt?: number;
  /** Why it was sent again (`timeout`, `connection_closed`); empty the first time. */
  retry_reason?: string;
}

/** The fake app's id, as in `api_app_id`. */
export const APP_ID = 'A0FAKEAPP';

let envelopeCounter = 0;

/** A new envelope id. */
export function newEnvelopeId(): string {
  envelopeCounter += 1;
  return `env-${Date.now().toString(36)}-${envelopeCounter}`;
}

/** An Events API delivery of `event`. */
export function eventEnvelope(workspace: FakeWorkspace, event: Record<string, unknown>): Envelope {
  const envelopeId = newEnvelopeId();
  return {
    envelope_id: envelopeId,
    type: 'events_api',
    accepts_response_payload: false,
    retry_attempt: 0,
    retry_reason: '',
    payload: {
      token: 'verification-token',
      team_id: workspace.teamId,
      api_app_id: APP_ID,
      event,
      type: 'event_callback',
      event_id: `Ev${envelopeCounter.toString().padStart(8, '0')}`,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [
        { enterprise_id: null, team_id: workspace.teamId, user_id: workspace.bot.userId, is_bot: true, is_enterprise_install: false },
      ],
      is_ext_shared_channel: false,
    },
  };
}

/** A press of `button` on `message` by `user`. */
export function blockActionsEnvelope(
  workspace: FakeWorkspace,
  message: FakeMessage,
  user: string,
  button: { action_id: string; value?: string; text?: { text?: string } },
  responseUrl: string,
): Envelope {
  const name = workspace.users.get(user)?.name ?? user;
  const container: Record<string, unknown> = { type: 'message', message_ts: message.ts, channel_id: message.channel, is_ephemeral: false };
  if (message.thread_ts) container.thread_ts = message.thread_ts;
  return {
    envelope_id: newEnvelopeId(),
    type: 'interactive',
    accepts_response_payload: false,
    payload: {
      type: 'block_actions',
      user: { id: user, username: name, name, team_id: workspace.teamId },
      api_app_id: APP_ID,
      token: 'verification-token',
      container,
      trigger_id: `trigger-${Date.now()}`,
      team: { id: workspace.teamId, domain: 'fake' },
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: message.channel, name: workspace.conversations.get(message.channel)?.name ?? 'directmessage' },
      message: { type: 'message', ts: message.ts, text: message.text, blocks: message.blocks, user: message.user, bot_id: message.bot_id, ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}) },
      state: { values: {} },
      response_url: responseUrl,
      actions: [
        {
          type: 'button',
          action_id: button.action_id,
          block_id: 'pincer_approval',
          text: { type: 'plain_text', text: button.text?.text ?? '', emoji: true },
          value: button.value,
          action_ts: `${Date.now() / 1000}`,
        },
      ],
    },
  };
}

/** An invocation of a slash command. */
export function slashCommandEnvelope(
  workspace: FakeWorkspace,
  options: { channel: string; user: string; command: string; text: string; responseUrl: string },
): Envelope {
  const conversation = workspace.conversations.get(options.channel);
  return {
    envelope_id: newEnvelopeId(),
    type: 'slash_commands',
    accepts_response_payload: true,
    payload: {
      token: 'verification-token',
      team_id: workspace.teamId,
      team_domain: 'fake',
      channel_id: options.channel,
      channel_name: conversation?.type === 'im' ? 'directmessage' : (conversation?.name ?? 'unknown'),
      user_id: options.user,
      user_name: workspace.users.get(options.user)?.name ?? options.user,
      command: options.command,
      text: options.text,
      api_app_id: APP_ID,
      is_enterprise_install: 'false',
      response_url: options.responseUrl,
      trigger_id: `trigger-${Date.now()}`,
    },
  };
}
