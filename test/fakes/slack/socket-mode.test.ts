/**
 * The fake's Socket Mode with several connections, as an app with several
 * instances has: envelopes spread over the connections in turn, and an
 * envelope left unacknowledged sent again elsewhere with its retry_attempt.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startFakeSlack, type FakeSlack } from './index.js';

let fake: FakeSlack | undefined;
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await fake?.close();
  fake = undefined;
});

interface Client {
  ws: WebSocket;
  /** Envelopes received (hello and disconnect messages left out). */
  received: { envelope_id: string; retry_attempt?: number; retry_reason?: string }[];
}

/** Opens a Socket Mode connection as a client would; `ack: false` never acknowledges. */
async function connect(slack: FakeSlack, ack = true): Promise<Client> {
  const response = await fetch(`${slack.apiUrl}apps.connections.open`, { method: 'POST', headers: { authorization: `Bearer ${slack.appToken}` } });
  const { url } = (await response.json()) as { url: string };
  const ws = new WebSocket(url);
  sockets.push(ws);
  const client: Client = { ws, received: [] };
  ws.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString()) as Client['received'][number] & { type: string };
    if (!message.envelope_id) return;
    client.received.push(message);
    if (ack) ws.send(JSON.stringify({ envelope_id: message.envelope_id }));
  });
  await new Promise((resolve) => ws.once('open', resolve));
  return client;
}

async function setUp(redeliverAfterMs?: number): Promise<FakeSlack> {
  fake = await startFakeSlack(redeliverAfterMs === undefined ? {} : { redeliverAfterMs });
  fake.addUser({ id: 'U1', name: 'One' });
  fake.addConversation({ id: 'D1', type: 'im', user: 'U1' });
  return fake;
}

describe('fake Slack Socket Mode with several connections', () => {
  it('spreads envelopes over the open connections in turn', async () => {
    const slack = await setUp();
    const clients = [await connect(slack), await connect(slack), await connect(slack)];
    await slack.waitFor(() => slack.socketConnections.open === 3, 2_000, 'three connections');
    for (let i = 0; i < 9; i++) await slack.sendMessage({ channel: 'D1', user: 'U1', text: `m${i}` });
    expect(clients.map((client) => client.received.length)).toEqual([3, 3, 3]);
    expect(clients.flatMap((client) => client.received).every((envelope) => envelope.retry_attempt === 0)).toBe(true);
  });

  it('sends an envelope again to another connection when its connection closes before the acknowledgement', async () => {
    const slack = await setUp(60_000);
    const silent = await connect(slack, false);
    const other = await connect(slack);
    await slack.waitFor(() => slack.socketConnections.open === 2, 2_000, 'two connections');
    const sends = [0, 1].map((i) => slack.sendMessage({ channel: 'D1', user: 'U1', text: `m${i}` }));
    await slack.waitFor(() => silent.received.length === 1, 2_000, 'the silent connection to get one');
    silent.ws.terminate();
    await Promise.all(sends);
    const again = other.received.find((envelope) => envelope.envelope_id === silent.received[0]!.envelope_id);
    expect(again).toMatchObject({ retry_attempt: 1, retry_reason: 'connection_closed' });
    expect(other.received).toHaveLength(2);
  });

  it('sends an unacknowledged envelope again after the deadline, then gives up after three retries', async () => {
    const slack = await setUp(100);
    const silent = await connect(slack, false);
    const id = await slack.sendEvent({ type: 'message', channel: 'D1', user: 'U1', text: 'nobody answers', ts: '1.000001' });
    await slack.waitFor(() => silent.received.length === 4, 2_000, 'three redeliveries');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(silent.received.map((envelope) => envelope.retry_attempt)).toEqual([0, 1, 2, 3]);
    expect(silent.received.every((envelope) => envelope.envelope_id === id)).toBe(true);
    expect(slack.acked(id)).toBe(false);
  });

  it('holds envelopes while no connection is open and sends them to the next one', async () => {
    const slack = await setUp();
    const id = await slack.sendEvent({ type: 'message', channel: 'D1', user: 'U1', text: 'early', ts: '1.000002' });
    const client = await connect(slack);
    await slack.waitForAck(id);
    expect(client.received.map((envelope) => envelope.envelope_id)).toEqual([id]);
  });
});
