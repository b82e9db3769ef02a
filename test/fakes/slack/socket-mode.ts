/**
 * The Socket Mode side of the fake: WebSocket connections opened with the URL
 * from apps.connections.open, a `hello` on each, envelopes sent to the newest
 * open connection (queued while none is open, as Slack holds them), and the
 * acknowledgements received, by `envelope_id`.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Envelope } from './envelopes.js';

/** The Socket Mode endpoint of the fake. */
export class SocketModeHub {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly open: WebSocket[] = [];
  private readonly queued: Envelope[] = [];
  private readonly acks = new Map<string, unknown>();
  private readonly waiters: (() => void)[] = [];
  private readonly tickets = new Set<string>();
  /** How many connections were ever opened (a reconnect adds one). */
  connectionCount = 0;

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

  /** Sends an envelope to the newest open connection, or queues it until one opens. */
  deliver(envelope: Envelope): void {
    const ws = this.open.at(-1);
    if (ws) ws.send(JSON.stringify(envelope));
    else this.queued.push(envelope);
  }

  /** Asks the connected clients to reconnect, as Slack does when it recycles a server. */
  requestReconnect(): void {
    for (const ws of this.open) ws.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested' }));
  }

  /** Whether the envelope was acknowledged, and with what payload. */
  ack(envelopeId: string): { acked: boolean; payload?: unknown } {
    return this.acks.has(envelopeId) ? { acked: true, payload: this.acks.get(envelopeId) } : { acked: false };
  }

  /** Records an acknowledgement that arrived another way (HTTP delivery). */
  recordAck(envelopeId: string, payload: unknown): void {
    this.acks.set(envelopeId, payload);
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

  /** Drops every connection at once. */
  close(): void {
    for (const ws of this.wss.clients) ws.terminate();
    this.open.length = 0;
    this.wss.close();
  }

  private accept(ws: WebSocket): void {
    this.connectionCount += 1;
    this.open.push(ws);
    ws.on('message', (data) => this.onMessage(data.toString()));
    ws.on('close', () => {
      const index = this.open.indexOf(ws);
      if (index >= 0) this.open.splice(index, 1);
      this.notify();
    });
    ws.send(JSON.stringify({
      type: 'hello',
      num_connections: this.open.length,
      debug_info: { host: 'fake-slack', approximate_connection_time: 18060 },
      connection_info: { app_id: 'A0FAKEAPP' },
    }));
    for (const envelope of this.queued.splice(0)) ws.send(JSON.stringify(envelope));
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
