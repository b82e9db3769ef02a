/**
 * The Socket Mode side of the fake: WebSocket connections opened with the URL
 * from apps.connections.open, a `hello` on each, and envelopes spread over the
 * open connections in turn, as Slack spreads an app's events over all of its
 * connections (queued while none is open, as Slack holds them). An envelope
 * that is not acknowledged when its connection closes, or within
 * `redeliverAfterMs`, is sent again to another open connection with its
 * `retry_attempt` incremented, up to {@link MAX_RETRIES} times, as Slack does.
 * `stall()` leaves the open connections open but silent: no pong to the
 * client's pings, no envelope, and what they send unread; a connection opened
 * after that is served as usual.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Envelope } from './envelopes.js';

/** Slack gives up on an envelope after this many redeliveries. */
export const MAX_RETRIES = 3;

/** How long Slack waits for an acknowledgement before it redelivers, by default. */
export const DEFAULT_REDELIVER_AFTER_MS = 3_000;

/** An envelope sent and not acknowledged yet. */
interface InFlight {
  envelope: Envelope;
  ws: WebSocket;
  timer: NodeJS.Timeout;
}

/** One delivery of an envelope to a connection. */
export interface SocketDelivery {
  envelopeId: string;
  /** Which connection (1 for the first ever opened). */
  connection: number;
  retryAttempt: number;
}

/** The Socket Mode endpoint of the fake. */
export class SocketModeHub {
  // Pongs are sent by hand, so that a stalled connection can leave the client's pings unanswered.
  private readonly wss = new WebSocketServer({ noServer: true, autoPong: false });
  private readonly stalled = new WeakSet<WebSocket>();
  private readonly open: WebSocket[] = [];
  private readonly numbers = new Map<WebSocket, number>();
  private readonly queued: Envelope[] = [];
  private readonly inFlight = new Map<string, InFlight>();
  private readonly acks = new Map<string, unknown>();
  private readonly waiters: (() => void)[] = [];
  private readonly tickets = new Set<string>();
  private cursor = 0;
  private closed = false;
  /** How many connections were ever opened (a reconnect adds one). */
  connectionCount = 0;
  /** Every envelope sent, once per delivery, in order. */
  readonly deliveries: SocketDelivery[] = [];

  constructor(private readonly redeliverAfterMs = DEFAULT_REDELIVER_AFTER_MS) {}

  /** A one-time ticket for the URL apps.connections.open returns. */
  issueTicket(): string {
    const ticket = Math.random().toString(36).slice(2);
    this.tickets.add(ticket);
    return ticket;
  }

  /** Accepts an HTTP upgrade that carries a valid ticket. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const ticket = new URL(request.url ?? '/', 'http://fake').searchParams.get('ticket') ?? '';
    if (!this.tickets.delete(ticket)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws));
  }

  /** Sends an envelope to the next open connection in turn, or queues it until one opens. */
  deliver(envelope: Envelope): void {
    if (this.closed || this.acks.has(envelope.envelope_id)) return;
    const ws = this.pick();
    if (ws) this.sendTo(ws, envelope);
    else this.queued.push(envelope);
  }

  /** Asks the connected clients to reconnect, as Slack does when it recycles a server. */
  requestReconnect(): void {
    for (const ws of this.open) ws.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested' }));
  }

  /** Leaves every open connection open but silent from now on; envelopes wait for a connection that is not. */
  stall(): void {
    for (const ws of this.open) this.stalled.add(ws);
  }

  /** Whether the envelope was acknowledged, and with what payload. */
  ack(envelopeId: string): { acked: boolean; payload?: unknown } {
    return this.acks.has(envelopeId) ? { acked: true, payload: this.acks.get(envelopeId) } : { acked: false };
  }

  /** Records an acknowledgement (from a connection, or from an HTTP delivery); the first one counts. */
  recordAck(envelopeId: string, payload: unknown): void {
    if (!this.acks.has(envelopeId)) this.acks.set(envelopeId, payload);
    const pending = this.inFlight.get(envelopeId);
    if (pending) clearTimeout(pending.timer);
    this.inFlight.delete(envelopeId);
    this.notify();
  }

  /** Number of connections open now. */
  get openCount(): number {
    return this.open.length;
  }

  /** Resolves at the next change (a connection, a close or an acknowledgement). */
  changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Drops every connection at once and forgets what was in flight. */
  close(): void {
    this.closed = true;
    for (const pending of this.inFlight.values()) clearTimeout(pending.timer);
    this.inFlight.clear();
    for (const ws of this.wss.clients) ws.terminate();
    this.open.length = 0;
    this.wss.close();
  }

  /** The next open connection in turn, skipping `avoid` when another one is open. */
  private pick(avoid?: WebSocket): WebSocket | undefined {
    const candidates = this.open.filter((ws) => ws.readyState === ws.OPEN && !this.stalled.has(ws));
    const choices = candidates.length > 1 && avoid ? candidates.filter((ws) => ws !== avoid) : candidates;
    if (choices.length === 0) return undefined;
    this.cursor = (this.cursor + 1) % choices.length;
    return choices[this.cursor];
  }

  private sendTo(ws: WebSocket, envelope: Envelope): void {
    const timer = setTimeout(() => this.redeliver(envelope.envelope_id, 'timeout'), this.redeliverAfterMs);
    this.inFlight.set(envelope.envelope_id, { envelope, ws, timer });
    this.deliveries.push({ envelopeId: envelope.envelope_id, connection: this.numbers.get(ws) ?? 0, retryAttempt: envelope.retry_attempt ?? 0 });
    ws.send(JSON.stringify(envelope));
  }

  /** Sends an unacknowledged envelope again, elsewhere if possible; drops it after {@link MAX_RETRIES}. */
  private redeliver(envelopeId: string, reason: string): void {
    const pending = this.inFlight.get(envelopeId);
    if (!pending) return;
    clearTimeout(pending.timer);
    this.inFlight.delete(envelopeId);
    const attempt = (pending.envelope.retry_attempt ?? 0) + 1;
    if (this.closed || attempt > MAX_RETRIES) return;
    const again: Envelope = { ...pending.envelope, retry_attempt: attempt, retry_reason: reason };
    const ws = this.pick(pending.ws);
    if (ws) this.sendTo(ws, again);
    else this.queued.push(again);
  }

  private accept(ws: WebSocket): void {
    this.connectionCount += 1;
    this.numbers.set(ws, this.connectionCount);
    this.open.push(ws);
    ws.on('message', (data) => {
      if (!this.stalled.has(ws)) this.onMessage(data.toString());
    });
    ws.on('ping', (data) => {
      if (!this.stalled.has(ws)) ws.pong(data);
    });
    ws.on('close', () => this.onClose(ws));
    ws.send(JSON.stringify({
      type: 'hello',
      num_connections: this.open.length,
      debug_info: { host: 'fake-slack', approximate_connection_time: 18060 },
      connection_info: { app_id: 'A0FAKEAPP' },
    }));
    for (const envelope of this.queued.splice(0)) this.sendTo(ws, envelope);
    this.notify();
  }

  /** A closed connection's unacknowledged envelopes go to the others (or wait for the next one). */
  private onClose(ws: WebSocket): void {
    const index = this.open.indexOf(ws);
    if (index >= 0) this.open.splice(index, 1);
    for (const [envelopeId, pending] of [...this.inFlight]) {
      if (pending.ws === ws) this.redeliver(envelopeId, 'connection_closed');
    }
    this.notify();
  }

  private onMessage(text: string): void {
    try {
      const message = JSON.parse(text) as { envelope_id?: string; payload?: unknown };
      if (message.envelope_id) this.recordAck(message.envelope_id, message.payload);
    } catch {
      // Not an acknowledgement: nothing to record.
    }
  }

  private notify(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}
