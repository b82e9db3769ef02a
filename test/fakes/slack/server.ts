/**
 * A fake Slack on 127.0.0.1: the Web API (`/api/<method>`, form or JSON
 * bodies, Bearer tokens, always HTTP 200 unless a failure is injected), the
 * Socket Mode WebSocket handed out by apps.connections.open, and the
 * `response_url`s of slash commands. Test helpers play the users: write
 * messages, press buttons, run commands, and read what the bot showed.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SharedFiles, type SharedFileInput } from './files.js';
import { FileUploads } from './uploads.js';
import { blockActionsEnvelope, eventEnvelope, slashCommandEnvelope, type Envelope } from './envelopes.js';
import { httpBodyOf, postSigned } from './signing.js';
import { SocketModeHub, type SocketDelivery } from './socket-mode.js';
import { APP_TOKEN_METHODS, callMethod, tokenRefusal, type Params } from './web-api.js';
import { FakeWorkspace, type FakeConversation, type FakeMessage, type FakeUser } from './workspace.js';
import { readFileSync } from 'node:fs';
import YAML from 'yaml';

/** Options of {@link startFakeSlack}. */
export interface FakeSlackOptions {
  botToken?: string;
  appToken?: string;
  teamId?: string;
  /** Echo the bot's own posts back as message events, as Slack does (default true). */
  echoBotMessages?: boolean;
  /** The bot token's scopes, sent in `x-oauth-scopes` on each answer to it (default: the manifest's). */
  scopes?: readonly string[];
  /** Socket Mode: an envelope not acknowledged this long after it was sent goes again to another connection (default 3 s, as Slack). */
  redeliverAfterMs?: number;
}

/** The bot scopes of `config/slack-app-manifest.yaml`. */
export const MANIFEST_SCOPES: readonly string[] = (
  YAML.parse(readFileSync(new URL('../../../config/slack-app-manifest.yaml', import.meta.url), 'utf8')) as { oauth_config: { scopes: { bot: string[] } } }
).oauth_config.scopes.bot;

/** One Web API call the fake received. */
export interface ApiCall {
  method: string;
  params: Params;
  at: number;
  /** HTTP status answered (429 / 5xx when a failure was injected). */
  status: number;
}

/** A failure to answer instead of the method's result. */
export type InjectedFailure = { status: 429; retryAfter?: number } | { status: 500 | 502 | 503 } | { error: string };

/** How long helpers wait for the bot before failing the test. */
const WAIT_MS = 5_000;

/** Starts a fake Slack on a free port of 127.0.0.1. */
export async function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  const fake = new FakeSlack(options);
  await fake.listen();
  return fake;
}

/** The fake Slack and its test helpers. */
export class FakeSlack {
  readonly botToken: string;
  readonly appToken: string;
  readonly workspace: FakeWorkspace;
  readonly calls: ApiCall[] = [];
  /** The Socket Mode endpoint, for what the helpers below do not cover (e.g. `hub.stall()`). */
  readonly hub: SocketModeHub;
  /** Files people shared, served at their `url_private`. */
  readonly files: SharedFiles;
  /** Files the bot shared (files.uploadV2), and failures of the upload URL to inject. */
  readonly uploads = new FileUploads(() => this.baseUrl);
  private readonly server: Server;
  private readonly failures = new Map<string, InjectedFailure[]>();
  private readonly responseUrls = new Map<string, { user: string; channel: string }>();
  private readonly echo: boolean;
  private readonly scopes: readonly string[];
  private httpTarget: { url: string; secret: string } | undefined;
  private port = 0;

  constructor(options: FakeSlackOptions = {}) {
    this.botToken = options.botToken ?? 'xoxb-fake-bot-token';
    this.appToken = options.appToken ?? 'xapp-fake-app-token';
    this.echo = options.echoBotMessages ?? true;
    this.scopes = options.scopes ?? MANIFEST_SCOPES;
    this.hub = new SocketModeHub(options.redeliverAfterMs);
    this.workspace = new FakeWorkspace(options.teamId ?? 'T0FAKE', { userId: 'U0BOT', botId: 'B0BOT', name: 'pincer' });
    this.files = new SharedFiles(this.workspace.teamId, this.botToken, () => this.scopes.includes('files:read'));
    this.server = createServer((req, res) => void this.route(req, res));
    this.server.on('upgrade', (req, socket, head) => {
      if (req.url?.startsWith('/socket-mode')) this.hub.handleUpgrade(req, socket, head);
      else socket.destroy();
    });
  }

  /** The Web API base URL, ending in `/api/`. */
  get apiUrl(): string {
    return `${this.baseUrl}/api/`;
  }

  /** The team (workspace) id. */
  get teamId(): string {
    return this.workspace.teamId;
  }

  /** The bot's user id and bot id, as auth.test reports them. */
  get bot(): { userId: string; botId: string } {
    return this.workspace.bot;
  }

  private get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Binds 127.0.0.1 on a free port. */
  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    await this.files.listen();
  }

  /** Stops everything, dropping open connections. */
  async close(): Promise<void> {
    await this.files.close();
    this.hub.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ---- workspace setup ----

  /** Adds a member. */
  addUser(user: FakeUser): FakeUser {
    this.workspace.users.set(user.id, user);
    return user;
  }

  /** Adds a conversation (a DM needs `user`). */
  addConversation(conversation: FakeConversation): FakeConversation {
    this.workspace.conversations.set(conversation.id, conversation);
    return conversation;
  }

  // ---- delivery ----

  /** Delivers by signed HTTP POSTs to `url` (HTTP mode) instead of Socket Mode. */
  deliverOverHttp(url: string, signingSecret: string): void {
    this.httpTarget = { url, secret: signingSecret };
  }

  /** Sends an envelope (Socket Mode, or HTTP when set) and returns its id. */
  async deliver(envelope: Envelope): Promise<string> {
    if (!this.httpTarget) {
      this.hub.deliver(envelope);
      return envelope.envelope_id;
    }
    const { body, contentType } = httpBodyOf(envelope);
    const status = await postSigned(this.httpTarget.url, this.httpTarget.secret, body, contentType);
    if (status === 200) this.hub.recordAck(envelope.envelope_id, {});
    return envelope.envelope_id;
  }

  /** Delivers an Events API event. */
  sendEvent(event: Record<string, unknown>): Promise<string> {
    return this.deliver(eventEnvelope(this.workspace, event));
  }

  /**
   * A user writes. With `mention` the bot's `<@id>` is put in front of the text and, in
   * a channel, Slack's two events are sent: `app_mention` and `message` (in `order`).
   * Waits until every envelope is acknowledged.
   */
  async sendMessage(options: {
    channel: string;
    user: string;
    text: string;
    threadTs?: string;
    mention?: boolean;
    order?: 'mention-first' | 'message-first';
    extra?: Record<string, unknown>;
    /** How long to wait for the acknowledgements (longer while a client reconnects). */
    ackTimeoutMs?: number;
    /** Files shared with the message (a `file_share` message, as Slack sends one). */
    files?: SharedFileInput[];
  }): Promise<{ ts: string; envelopeIds: string[] }> {
    const conversation = this.conversation(options.channel);
    const mentionTag = `<@${this.bot.userId}>`;
    const text = options.mention && !options.text.includes(mentionTag) ? `${mentionTag} ${options.text}` : options.text;
    const message = this.workspace.addMessage({ channel: options.channel, user: options.user, text, ...(options.threadTs ? { thread_ts: options.threadTs } : {}) });
    const shared = options.files?.length ? { subtype: 'file_share', files: options.files.map((file) => this.files.add(file, this.baseUrl)) } : {};
    const base = { user: options.user, text, ts: message.ts, event_ts: message.ts, channel: options.channel, team: this.teamId, ...this.threadFields(options.channel, options.threadTs), ...shared, ...options.extra };
    const events: Record<string, unknown>[] = [{ type: 'message', channel_type: conversation.type, client_msg_id: `msg-${message.ts}`, ...base }];
    if (options.mention && conversation.type !== 'im') {
      const mention = { type: 'app_mention', ...base };
      if (options.order === 'message-first') events.push(mention);
      else events.unshift(mention);
    }
    const envelopeIds: string[] = [];
    for (const event of events) envelopeIds.push(await this.sendEvent(event));
    await Promise.all(envelopeIds.map((id) => this.waitForAck(id, options.ackTimeoutMs)));
    return { ts: message.ts, envelopeIds };
  }

  /** A user presses a button (`actionId`) on a message; the button may have been removed since. */
  async pressButton(options: { channel: string; user: string; messageTs: string; actionId: string }): Promise<string> {
    const message = this.workspace.message(options.channel, options.messageTs);
    const button = message?.buttons.get(options.actionId);
    if (!message || !button) throw new Error(`no button ${options.actionId} on message ${options.messageTs}`);
    const responseUrl = this.newResponseUrl(options.user, options.channel);
    const id = await this.deliver(blockActionsEnvelope(this.workspace, message, options.user, button, responseUrl));
    await this.waitForAck(id);
    return id;
  }

  /** A user runs a slash command (`/pincer` by default) in a conversation. */
  async runSlashCommand(options: { channel: string; user: string; text: string; command?: string }): Promise<string> {
    const responseUrl = this.newResponseUrl(options.user, options.channel);
    const envelope = slashCommandEnvelope(this.workspace, { ...options, command: options.command ?? '/pincer', responseUrl });
    const id = await this.deliver(envelope);
    await this.waitForAck(id);
    return id;
  }

  /** Asks connected Socket Mode clients to reconnect. */
  requestReconnect(): void {
    this.hub.requestReconnect();
  }

  // ---- observation ----

  /** Whether an envelope was acknowledged. */
  acked(envelopeId: string): boolean {
    return this.hub.ack(envelopeId).acked;
  }

  /** Waits until the envelope is acknowledged. */
  waitForAck(envelopeId: string, timeoutMs = WAIT_MS): Promise<void> {
    return this.waitFor(() => this.acked(envelopeId), timeoutMs, `ack of ${envelopeId}`).then(() => undefined);
  }

  /** Socket Mode connections: open now, and ever opened. */
  get socketConnections(): { open: number; total: number } {
    return { open: this.hub.openCount, total: this.hub.connectionCount };
  }

  /** Every Socket Mode delivery (a redelivery counts again), in order. */
  get socketDeliveries(): readonly SocketDelivery[] {
    return this.hub.deliveries;
  }

  /** Every message of a conversation (thread replies included), latest state, oldest first. */
  messages(channel: string): FakeMessage[] {
    return this.workspace.messages(channel);
  }

  /** The bot's messages in a conversation. */
  botMessages(channel: string): FakeMessage[] {
    return this.messages(channel).filter((message) => message.user === this.bot.userId);
  }

  /** Ephemeral messages (chat.postEphemeral) shown to `user`. */
  ephemerals(user: string): { channel: string; text: string; thread_ts?: string }[] {
    return this.workspace.notices.filter((notice) => notice.user === user && notice.kind === 'ephemeral');
  }

  /** Slash command responses (response_url POSTs) for `user`'s commands. */
  responses(user: string): { channel: string; text: string; response_type?: string }[] {
    return this.workspace.notices.filter((notice) => notice.user === user && notice.kind === 'response');
  }

  /** Web API calls of one method. */
  callsOf(method: string): ApiCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** Answers the next call(s) of `method` with a failure instead. */
  failNext(method: string, failure: InjectedFailure, times = 1): void {
    const queue = this.failures.get(method) ?? [];
    for (let i = 0; i < times; i++) queue.push(failure);
    this.failures.set(method, queue);
  }

  /** Polls `probe` until it returns something truthy. */
  async waitFor<T>(probe: () => T | undefined | null | false, timeoutMs = WAIT_MS, what = 'condition'): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`fake slack: timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  // ---- HTTP ----

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    if (req.method === 'GET' && this.files.serve(url.pathname, req, res)) return;
    if (req.method === 'POST' && url.pathname.startsWith('/upload/')) return this.uploads.receive(url.pathname.slice(8), req, res);
    const raw = await readBody(req);
    if (req.method === 'POST' && url.pathname.startsWith('/api/')) return this.api(url.pathname.slice(5), req, raw, res);
    if (req.method === 'POST' && url.pathname.startsWith('/respond/')) return this.respond(url.pathname.slice(9), raw, res);
    res.writeHead(404).end();
  }

  private api(method: string, req: IncomingMessage, raw: string, res: ServerResponse): void {
    const params = parseParams(req.headers['content-type'] ?? '', raw);
    const failure = this.failures.get(method)?.shift();
    const status = failure && 'status' in failure ? failure.status : 200;
    this.calls.push({ method, params, at: Date.now(), status });
    if (failure && 'status' in failure) {
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (failure.status === 429) headers['Retry-After'] = String(failure.retryAfter ?? 1);
      res.writeHead(failure.status, headers).end(JSON.stringify({ ok: false, error: failure.status === 429 ? 'ratelimited' : 'internal_error' }));
      return;
    }
    const header = req.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : typeof params.token === 'string' ? params.token : '';
    const refused = tokenRefusal(method, token, { bot: this.botToken, app: this.appToken });
    const body = failure ? { ok: false, error: failure.error } : refused ?? this.run(method, params);
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (!refused && !APP_TOKEN_METHODS.has(method)) headers['x-oauth-scopes'] = this.scopes.join(',');
    res.writeHead(200, headers).end(JSON.stringify(body));
  }

  private run(method: string, params: Params): Params {
    if (this.uploads.handles(method)) return this.scopes.includes('files:write') ? this.uploads.call(method, params) : { ok: false, error: 'missing_scope', needed: 'files:write' };
    return callMethod(method, this.workspace, params, {
      socketUrl: () => `ws://127.0.0.1:${this.port}/socket-mode?ticket=${this.hub.issueTicket()}`,
      onBotMessage: (message) => this.echoBotMessage(message),
    });
  }

  private respond(id: string, raw: string, res: ServerResponse): void {
    const target = this.responseUrls.get(id);
    if (!target) {
      res.writeHead(404).end('expired_url');
      return;
    }
    const body = JSON.parse(raw || '{}') as { text?: string; response_type?: string; blocks?: unknown[] };
    const responseType = body.response_type ?? 'ephemeral';
    this.workspace.addNotice({ user: target.user, channel: target.channel, text: body.text ?? '', kind: 'response', response_type: responseType });
    if (responseType === 'in_channel') {
      this.workspace.addMessage({ channel: target.channel, text: body.text ?? '', blocks: body.blocks, user: this.bot.userId, bot_id: this.bot.botId, viaResponseUrl: true });
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ ok: true }));
  }

  // ---- helpers ----

  private conversation(channel: string): FakeConversation {
    const conversation = this.workspace.conversations.get(channel);
    if (!conversation) throw new Error(`fake slack: no conversation ${channel}`);
    return conversation;
  }

  /** `thread_ts` and `parent_user_id` of a thread reply, as Slack adds them. */
  private threadFields(channel: string, threadTs: string | undefined): Record<string, string> {
    if (!threadTs) return {};
    const parent = this.workspace.message(channel, threadTs);
    return parent?.user ? { thread_ts: threadTs, parent_user_id: parent.user } : { thread_ts: threadTs };
  }

  private echoBotMessage(message: FakeMessage): void {
    if (!this.echo) return;
    const conversation = this.workspace.conversations.get(message.channel);
    const event = {
      type: 'message',
      channel: message.channel,
      channel_type: conversation?.type,
      user: this.bot.userId,
      bot_id: this.bot.botId,
      app_id: 'A0FAKEAPP',
      bot_profile: { id: this.bot.botId, name: 'pincer' },
      text: message.text,
      ts: message.ts,
      event_ts: message.ts,
      team: this.teamId,
      ...this.threadFields(message.channel, message.thread_ts),
    };
    void this.sendEvent(event).catch(() => undefined);
  }

  private newResponseUrl(user: string, channel: string): string {
    const id = Math.random().toString(36).slice(2);
    this.responseUrls.set(id, { user, channel });
    return `${this.baseUrl}/respond/${id}`;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Form bodies carry nested values (blocks) as JSON strings; JSON bodies carry them as they are. */
function parseParams(contentType: string, raw: string): Params {
  if (contentType.includes('application/json')) return raw ? (JSON.parse(raw) as Params) : {};
  const params: Params = {};
  for (const [key, value] of new URLSearchParams(raw)) params[key] = /^[[{]/.test(value) ? safeJson(value) : value;
  return params;
}

function safeJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
