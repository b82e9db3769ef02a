/**
 * Slack's HTTP delivery: request bodies as Slack encodes them per envelope
 * type, signed with `v0=HMAC_SHA256(secret, "v0:" + timestamp + ":" + body)`.
 */
import { createHmac } from 'node:crypto';
import type { Envelope } from './envelopes.js';

/** The signature headers of a request body. */
export function signSlackRequest(secret: string, rawBody: string, timestamp = Math.floor(Date.now() / 1000)): Record<string, string> {
  const signature = createHmac('sha256', secret).update(`v0:${timestamp}:${rawBody}`).digest('hex');
  return { 'X-Slack-Signature': `v0=${signature}`, 'X-Slack-Request-Timestamp': String(timestamp) };
}

/** An envelope's HTTP body: JSON for events, `payload=` for interactions, form fields for commands. */
export function httpBodyOf(envelope: Envelope): { body: string; contentType: string } {
  if (envelope.type === 'events_api') return { body: JSON.stringify(envelope.payload), contentType: 'application/json' };
  if (envelope.type === 'interactive') {
    return { body: new URLSearchParams({ payload: JSON.stringify(envelope.payload) }).toString(), contentType: 'application/x-www-form-urlencoded' };
  }
  const fields = Object.fromEntries(Object.entries(envelope.payload).map(([key, value]) => [key, String(value)]));
  return { body: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded' };
}

/**
 * POSTs a body to `url`, signed with `secret` (or with a wrong signature when
 * `tamper` is set), and returns the HTTP status.
 */
export async function postSigned(url: string, secret: string, body: string, contentType: string, options: { tamper?: boolean } = {}): Promise<number> {
  const headers = { 'Content-Type': contentType, ...signSlackRequest(secret, options.tamper ? `${body} ` : body) };
  const response = await fetch(url, { method: 'POST', headers, body });
  await response.arrayBuffer();
  return response.status;
}
