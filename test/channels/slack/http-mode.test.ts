import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboundCommand, InboundMessage } from '../../../src/channels/types.js';
import { eventEnvelope, httpBodyOf, postSigned, signSlackRequest } from '../../fakes/slack/index.js';
import { ALICE, DM_ALICE, GENERAL, startHarness, type Harness } from './harness.js';

const SECRET = 'signing-secret-for-tests';
let harness: Harness;
let eventsUrl: string;

beforeAll(async () => {
  harness = await startHarness({ mode: 'http', signingSecret: SECRET, port: 0 }, { httpHost: '127.0.0.1' });
  eventsUrl = `http://127.0.0.1:${harness.channel.listeningPort}/slack/events`;
  harness.fake.deliverOverHttp(eventsUrl, SECRET);
});

afterAll(async () => {
  await harness.close();
});

function messageBody(text: string): { body: string; contentType: string } {
  const event = { type: 'message', channel: DM_ALICE, channel_type: 'im', user: ALICE.id, text, ts: `${Date.now() / 1000}` };
  return httpBodyOf(eventEnvelope(harness.fake.workspace, event));
}

describe('SlackChannel in HTTP mode', () => {
  it('listens without opening a Socket Mode connection', () => {
    expect(harness.channel.listeningPort).toBeGreaterThan(0);
    expect(harness.fake.callsOf('apps.connections.open')).toHaveLength(0);
  });

  it('accepts a correctly signed event and yields it', async () => {
    const before = harness.recorder.events.length;
    const { body, contentType } = messageBody('signed and sound');
    expect(await postSigned(eventsUrl, SECRET, body, contentType)).toBe(200);
    const event = (await harness.recorder.waitFor(before + 1))[before] as InboundMessage;
    expect(event).toMatchObject({ text: 'signed and sound', chat: { chatId: DM_ALICE, kind: 'dm' } });
  });

  it('rejects a bad signature, a wrong secret and a stale timestamp with 401, yielding nothing', async () => {
    const before = harness.recorder.events.length;
    const { body, contentType } = messageBody('forged');
    expect(await postSigned(eventsUrl, SECRET, body, contentType, { tamper: true })).toBe(401);
    expect(await postSigned(eventsUrl, 'another-secret', body, contentType)).toBe(401);
    const stale = signSlackRequest(SECRET, body, Math.floor(Date.now() / 1000) - 10 * 60);
    const response = await fetch(eventsUrl, { method: 'POST', headers: { 'Content-Type': contentType, ...stale }, body });
    expect(response.status).toBe(401);
    // HTTP mode answers before the listeners run, so the acks say nothing of order: a signed marker
    // after the refused posts is the wait, and it is the one event they are followed by.
    const marker = messageBody('marker');
    expect(await postSigned(eventsUrl, SECRET, marker.body, marker.contentType)).toBe(200);
    const events = (await harness.recorder.waitFor(before + 1)) as InboundMessage[];
    expect(events.slice(before).map((event) => event.text)).toEqual(['marker']);
  });

  it('takes slash commands and mentions over signed HTTP too', async () => {
    const { fake, recorder } = harness;
    const before = recorder.events.length;
    await fake.sendMessage({ channel: GENERAL, user: ALICE.id, text: 'over http', mention: true });
    await fake.runSlashCommand({ channel: GENERAL, user: ALICE.id, text: 'status' });
    const [message, command] = (await recorder.waitFor(before + 2)).slice(before) as [InboundMessage, InboundCommand];
    expect(message).toMatchObject({ text: 'over http', mentionsBot: true });
    expect(command).toMatchObject({ name: 'status', chat: { chatId: GENERAL } });
    await command.respond!({ text: 'all good', private: true });
    expect(fake.responses(ALICE.id).at(-1)).toMatchObject({ response_type: 'ephemeral', text: 'all good' });
  });
});
