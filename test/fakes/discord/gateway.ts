/**
 * The fake gateway (API v10, JSON, uncompressed): HELLO, IDENTIFY -> READY +
 * GUILD_CREATE, heartbeats, RESUME -> replay + RESUMED, and dispatches. A
 * login outlives its socket (unless the client closed it with 1000/1001), so
 * events sent while disconnected are replayed on resume, as Discord does.
 * IDENTIFY's `shard: [id, count]` is honoured: a login receives the guilds and
 * events of the guilds on its shard (`(guild_id >> 22) % count`), and DM
 * events on shard 0. `stall()` leaves the open sockets open but silent: no
 * heartbeat ACK and no dispatch reaches them (the dispatches are kept for a
 * resume), as a connection whose peer went away without closing it.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { guildCreateJson, userJson } from './payloads.js';
import { shardOf, type World } from './world.js';

interface Frame {
  op: 0;
  t: string;
  s: number;
  d: unknown;
}

/** One IDENTIFY and the dispatches since, resumable with its id and a sequence number. */
interface Login {
  id: string;
  seq: number;
  frames: Frame[];
  socket?: WebSocket;
  ended: boolean;
  /** `[id, count]` from the IDENTIFY. */
  shard: [number, number];
}

/** What an IDENTIFY carried (token omitted). */
export interface IdentifyRecord {
  intents: number;
  /** `[id, count]`; `[0, 1]` when the IDENTIFY had none. */
  shard: [number, number];
  at: number;
}

/** Discord's heartbeat interval, sent in HELLO unless the fake is given another. */
export const HEARTBEAT_INTERVAL_MS = 41_250;

/** The WebSocket side of the fake Discord. */
export class FakeGateway {
  readonly identifies: IdentifyRecord[] = [];
  resumes = 0;
  heartbeats = 0;
  /** Intent bits not enabled for the application: an IDENTIFY asking for one is closed with 4014. */
  disallowedIntents = 0;
  /** The shard count `GET /gateway/bot` recommends. */
  recommendedShards = 1;
  private readonly logins: Login[] = [];
  private readonly serverClosed = new WeakSet<WebSocket>();
  private readonly stalled = new WeakSet<WebSocket>();
  /** Heartbeats that went unanswered because their socket was stalled. */
  unansweredHeartbeats = 0;
  /** The heartbeat interval sent in HELLO. */
  heartbeatIntervalMs = HEARTBEAT_INTERVAL_MS;
  private readonly wss = new WebSocketServer({ noServer: true });

  /**
   * @param url the gateway's own URL, also sent as `resume_gateway_url` (else resumes go to the real Discord)
   * @param membersAtStart user ids listed in GUILD_CREATE
   */
  constructor(
    private readonly world: World,
    private readonly url: () => string,
    private readonly membersAtStart: () => string[],
  ) {}

  /** Takes over an HTTP upgrade request. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws));
  }

  /** Whether a login currently has an open socket. */
  get connected(): boolean {
    return this.logins.some((login) => !login.ended && login.socket?.readyState === 1);
  }

  /** The `[id, count]` of each login with an open socket. */
  get connectedShards(): [number, number][] {
    return this.logins.filter((login) => !login.ended && login.socket?.readyState === 1).map((login) => login.shard);
  }

  /**
   * Sends a dispatch to every live login on the shard of `guildId` (found from
   * `guild_id` or `channel_id` when not given; none: a DM, shard 0), buffered
   * for replay when its socket is down.
   */
  dispatch(t: string, d: unknown, guildId = this.guildIdOf(d)): void {
    for (const login of this.logins) {
      if (!login.ended && shardOf(guildId, login.shard[1]) === login.shard[0]) this.send(login, t, d);
    }
  }

  /** Closes every open socket from the server side; the logins stay resumable. */
  drop(code = 4000): void {
    for (const login of this.logins) {
      if (!login.socket) continue;
      this.serverClosed.add(login.socket);
      login.socket.close(code, 'fake gateway closed the connection');
    }
  }

  /** Keeps every open socket open, but silent from now on (no ACK, no dispatch); later sockets are served. */
  stall(): void {
    for (const client of this.wss.clients) this.stalled.add(client);
  }

  /** Terminates every client and stops accepting new ones. */
  async close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private accept(ws: WebSocket): void {
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: this.heartbeatIntervalMs }, s: null, t: null }));
    ws.on('message', (data) => this.onMessage(ws, data));
    ws.on('close', (code) => this.onClose(ws, code));
  }

  private onMessage(ws: WebSocket, data: RawData): void {
    const payload = JSON.parse(data.toString()) as { op: number; d: Record<string, unknown> | null };
    if (this.stalled.has(ws)) {
      if (payload.op === 1) this.unansweredHeartbeats += 1;
      return;
    }
    if (payload.op === 1) {
      this.heartbeats += 1;
      ws.send(JSON.stringify({ op: 11 }));
    } else if (payload.op === 2) {
      this.identify(ws, payload.d ?? {});
    } else if (payload.op === 6) {
      this.resume(ws, payload.d ?? {});
    }
  }

  private identify(ws: WebSocket, d: Record<string, unknown>): void {
    if (d.token !== this.world.token) {
      ws.close(4004, 'Authentication failed.');
      return;
    }
    const shard = Array.isArray(d.shard) ? [Number(d.shard[0]), Number(d.shard[1])] as [number, number] : [0, 1] as [number, number];
    this.identifies.push({ intents: Number(d.intents), shard, at: Date.now() });
    if (Number(d.intents) & this.disallowedIntents) {
      ws.close(4014, 'Disallowed intent(s).');
      return;
    }
    if (!(shard[1] >= 1 && shard[0] >= 0 && shard[0] < shard[1])) {
      ws.close(4010, 'Invalid shard.');
      return;
    }
    const login: Login = { id: `resumable-${this.world.nextId()}`, seq: 0, frames: [], socket: ws, ended: false, shard };
    this.logins.push(login);
    this.send(login, 'READY', this.readyPayload(login));
    const members = [this.world.bot.id, ...this.membersAtStart()];
    for (const guild of this.guildsOf(login)) this.send(login, 'GUILD_CREATE', guildCreateJson(this.world, members, guild));
  }

  /** The guilds whose events go to `login`'s shard. */
  private guildsOf(login: Login) {
    return this.world.guilds.filter((guild) => shardOf(guild.id, login.shard[1]) === login.shard[0]);
  }

  /** The guild a dispatch is about: its `guild_id`, or its channel's guild. */
  private guildIdOf(d: unknown): string | undefined {
    const fields = (d ?? {}) as { guild_id?: unknown; channel_id?: unknown };
    if (typeof fields.guild_id === 'string') return fields.guild_id;
    return typeof fields.channel_id === 'string' ? this.world.channel(fields.channel_id)?.guildId : undefined;
  }

  private resume(ws: WebSocket, d: Record<string, unknown>): void {
    const login = this.logins.find((candidate) => candidate.id === d.session_id && !candidate.ended);
    if (!login || d.token !== this.world.token) {
      ws.send(JSON.stringify({ op: 9, d: false, s: null, t: null }));
      return;
    }
    this.resumes += 1;
    login.socket = ws;
    const after = Number(d.seq ?? 0);
    for (const frame of login.frames) if (frame.s > after) ws.send(JSON.stringify(frame));
    this.send(login, 'RESUMED', {});
  }

  private onClose(ws: WebSocket, code: number): void {
    for (const login of this.logins) {
      if (login.socket !== ws) continue;
      login.socket = undefined;
      // A client closing with 1000/1001 ends its login (no resume), as on Discord.
      if (!this.serverClosed.has(ws) && (code === 1000 || code === 1001)) login.ended = true;
    }
  }

  private send(login: Login, t: string, d: unknown): void {
    login.seq += 1;
    const frame: Frame = { op: 0, t, s: login.seq, d };
    login.frames.push(frame);
    if (login.socket?.readyState === 1 && !this.stalled.has(login.socket)) login.socket.send(JSON.stringify(frame));
  }

  private readyPayload(login: Login): Record<string, unknown> {
    return {
      v: 10,
      user: { ...userJson(this.world.bot), verified: true, mfa_enabled: false, flags: 0 },
      guilds: this.guildsOf(login).map((guild) => ({ id: guild.id, unavailable: true })),
      session_id: login.id,
      session_type: 'normal',
      resume_gateway_url: this.url(),
      shard: login.shard,
      application: { id: this.world.applicationId, flags: 0 },
      private_channels: [],
      relationships: [],
      presences: [],
      guild_join_requests: [],
      geo_ordered_rtc_regions: [],
      user_settings: {},
      auth: {},
    };
  }
}
