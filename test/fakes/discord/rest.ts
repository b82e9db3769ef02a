/**
 * The fake REST API (v10): the routes discord.js uses for a bot that sends,
 * edits and deletes messages, registers commands and answers interactions.
 * Every request is recorded; a failure (e.g. a 429) can be queued for the next
 * request matching a route. Interactions must be acknowledged within 3 s and
 * only once, as on Discord.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseMultipart, type FormPart } from '../http/multipart.js';
import type { FakeGateway } from './gateway.js';
import { channelJson, guildCreateJson, memberJson, messageJson, userJson } from './payloads.js';
import type { FakeInteraction, StoredMessage, World } from './world.js';

type Json = Record<string, unknown>;

/** One request as the fake received it. */
export interface RecordedRequest {
  method: string;
  /** Path without the `/api/v10` prefix, URL-decoded (`@original`, not `%40original`). */
  path: string;
  query: URLSearchParams;
  body: Json | undefined;
  status: number;
  at: number;
}

/** One file the bot sent with a message (multipart `files[n]`), for assertions. */
export interface UploadRecord {
  channelId: string;
  messageId: string;
  /** The part's file name. */
  name: string;
  size: number;
  /** SHA-256 of the bytes, hex. */
  sha256: string;
  /** The part's type (discord.js sniffs it from the bytes); an `image/*` shows inline. */
  contentType?: string;
  /** The message's text sent with it (`payload_json` content). */
  caption?: string;
  nonce?: string;
}

/** Discord's upload limit for a bot without a boosted server: 10 MB per message. */
const UPLOAD_LIMIT = 10 * 1024 * 1024;

/** A failure to return instead of handling the next matching request. */
export interface QueuedFailure {
  method: string;
  path: string | RegExp;
  status: number;
  /** Seconds, for 429s. */
  retryAfter: number;
  /** Handle the request first, then answer with the failure (a response lost on the way back). */
  afterHandling: boolean;
  /** Only a request that uploads files (multipart `files[n]`) matches. */
  withFiles?: boolean;
}

interface Call {
  method: string;
  path: string;
  query: URLSearchParams;
  body: Json | undefined;
  /** The `files[n]` parts of a multipart request. */
  files: FormPart[];
  authorized: boolean;
}

interface Result {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type Handler = (call: Call, params: string[]) => Result;

const ACK_DEADLINE_MS = 3_000;
const EPHEMERAL = 64;
const LOADING = 128;
const MESSAGE_CONTENT_INTENT = 1 << 15;
const GATEWAY_MESSAGE_CONTENT_LIMITED = 1 << 19;

/** Handles the fake's HTTP API. */
export class FakeRest {
  readonly requests: RecordedRequest[] = [];
  readonly failures: QueuedFailure[] = [];
  /** Files sent with messages (multipart), in order. */
  readonly uploads: UploadRecord[] = [];
  /** Registered commands: `global`, or a guild id. */
  readonly commands = new Map<string, Json[]>();
  private readonly routes: [string, RegExp, Handler][];
  /** New URLs for attachment URLs (set by the CDN): `POST /attachments/refresh-urls`. */
  refreshAttachmentUrls: (urls: string[]) => { original: string; refreshed: string }[] = () => [];

  constructor(
    private readonly world: World,
    private readonly gateway: FakeGateway,
    private readonly gatewayUrl: () => string,
  ) {
    this.routes = [
      ['GET', /^\/gateway\/bot$/, () => this.gatewayBot()],
      ['GET', /^\/users\/@me$/, () => ok({ ...userJson(world.bot), verified: true, flags: 0 })],
      ['GET', /^\/applications\/@me$/, () => ok({ id: world.applicationId, name: 'pincer', bot: userJson(world.bot), flags: this.applicationFlags() })],
      ['POST', /^\/users\/@me\/channels$/, (call) => ok(channelJson(world, world.dmChannel(String(call.body?.recipient_id))))],
      ['GET', /^\/channels\/(\d+)$/, (_, [id]) => this.getChannel(id!)],
      ['POST', /^\/channels\/(\d+)\/messages$/, (call, [id]) => this.createMessage(id!, call.body ?? {}, call.files)],
      ['GET', /^\/channels\/(\d+)\/messages\/(\d+)$/, (_, [, id]) => this.getMessage(id!)],
      ['PATCH', /^\/channels\/(\d+)\/messages\/(\d+)$/, (call, [, id]) => this.editBotMessage(id!, call.body ?? {})],
      ['DELETE', /^\/channels\/(\d+)\/messages\/(\d+)$/, (_, [, id]) => this.deleteBotMessage(id!)],
      ['POST', /^\/channels\/(\d+)\/typing$/, (_, [id]) => (world.channel(id!) ? { status: 204 } : unknownChannel())],
      ['PUT', /^\/applications\/(\d+)\/commands$/, (call) => this.putCommands('global', call.body)],
      ['PUT', /^\/applications\/(\d+)\/guilds\/(\d+)\/commands$/, (call, [, guildId]) => this.putCommands(guildId!, call.body)],
      ['GET', /^\/guilds\/(\d+)$/, (_, [guildId]) => this.getGuild(guildId!)],
      ['GET', /^\/guilds\/(\d+)\/members\/(\d+)$/, (_, [guildId, userId]) => this.getMember(guildId!, userId!)],
      ['POST', /^\/interactions\/(\d+)\/([^/]+)\/callback$/, (call, [id, token]) => this.callback(id!, token!, call)],
      ['PATCH', /^\/webhooks\/(\d+)\/([^/]+)\/messages\/([^/]+)$/, (call, [, token, id]) => this.editWebhookMessage(token!, id!, call.body ?? {})],
      ['DELETE', /^\/webhooks\/(\d+)\/([^/]+)\/messages\/([^/]+)$/, (_, [, token, id]) => this.deleteWebhookMessage(token!, id!)],
      ['POST', /^\/webhooks\/(\d+)\/([^/]+)$/, (call, [, token]) => this.followUp(token!, call.body ?? {})],
      ['POST', /^\/attachments\/refresh-urls$/, (call) => ok({ refreshed_urls: this.refreshAttachmentUrls((call.body?.attachment_urls as string[] | undefined) ?? []) })],
    ];
  }

  /**
   * The application's flags as Discord reports them: GATEWAY_MESSAGE_CONTENT_LIMITED
   * (1 << 19, an unverified bot in under 100 servers) while the Message Content
   * intent (1 << 15) is not disallowed.
   */
  private applicationFlags(): number {
    return this.gateway.disallowedIntents & MESSAGE_CONTENT_INTENT ? 0 : GATEWAY_MESSAGE_CONTENT_LIMITED;
  }

  /** Serves one HTTP request. */
  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://fake');
    const path = decodeURIComponent(url.pathname.replace(/^\/api(\/v\d+)?/, ''));
    const call: Call = {
      method: request.method ?? 'GET',
      path,
      query: url.searchParams,
      ...(await readBody(request)),
      authorized: request.headers.authorization === `Bot ${this.world.token}`,
    };
    const failure = this.takeFailure(call);
    const handled = !failure || failure.afterHandling ? this.route(call) : undefined;
    const result = failure ? failureResult(failure) : handled!;
    this.requests.push({ method: call.method, path, query: call.query, body: call.body, status: result.status, at: Date.now() });
    const text = result.body === undefined ? '' : JSON.stringify(result.body);
    response.writeHead(result.status, { ...(text ? { 'content-type': 'application/json' } : {}), ...result.headers });
    response.end(text);
  }

  private route(call: Call): Result {
    for (const [method, pattern, handler] of this.routes) {
      const match = pattern.exec(call.path);
      if (!match || method !== call.method) continue;
      const open = call.path.startsWith('/interactions/') || call.path.startsWith('/webhooks/');
      if (!open && !call.authorized) return { status: 401, body: { message: '401: Unauthorized', code: 0 } };
      return handler(call, match.slice(1));
    }
    return { status: 404, body: { message: '404: Not Found', code: 0 } };
  }

  private takeFailure(call: Call): QueuedFailure | undefined {
    const index = this.failures.findIndex(
      (failure) =>
        failure.method === call.method &&
        (typeof failure.path === 'string' ? failure.path === call.path : failure.path.test(call.path)) &&
        (!failure.withFiles || call.files.length > 0),
    );
    return index < 0 ? undefined : this.failures.splice(index, 1)[0];
  }

  private gatewayBot(): Result {
    // Shards may identify together (Discord allows 1 at a time for small bots), so that tests need not wait 5 s per shard.
    const limit = { total: 1000, remaining: 999, reset_after: 86_400_000, max_concurrency: this.gateway.recommendedShards };
    return ok({ url: this.gatewayUrl(), shards: this.gateway.recommendedShards, session_start_limit: limit });
  }

  private getChannel(id: string): Result {
    const channel = this.world.channel(id);
    return channel ? ok(channelJson(this.world, channel)) : unknownChannel();
  }

  private getMessage(id: string): Result {
    const message = this.world.message(id);
    return message && !message.deleted ? ok(messageJson(this.world, message)) : unknownMessage();
  }

  private createMessage(channelId: string, body: Json, files: FormPart[] = []): Result {
    if (!this.world.channel(channelId)) return unknownChannel();
    const nonce = body.nonce === undefined ? undefined : String(body.nonce);
    if (nonce && body.enforce_nonce) {
      const earlier = this.world.messages.find((message) => message.channelId === channelId && message.nonce === nonce);
      if (earlier) return ok(messageJson(this.world, earlier));
    }
    const content = String(body.content ?? '');
    if (files.reduce((total, file) => total + file.data.length, 0) > UPLOAD_LIMIT) return { status: 413, body: { message: 'Request entity too large', code: 40005 } };
    if (!content.trim() && !Array.isArray(body.components) && !files.length) return { status: 400, body: { message: 'Cannot send an empty message', code: 50006 } };
    if (content.length > 2000) return tooLong();
    const replyTo = (body.message_reference as Json | undefined)?.message_id;
    const message = this.world.addMessage({
      channelId,
      authorId: this.world.bot.id,
      content,
      components: (body.components as unknown[] | undefined) ?? [],
      nonce,
      replyToId: replyTo === undefined ? undefined : String(replyTo),
    });
    if (files.length) message.attachments = files.map((file, index) => this.recordUpload(message.id, channelId, file, index, content, nonce));
    this.gateway.dispatch('MESSAGE_CREATE', messageJson(this.world, message, true));
    return ok(messageJson(this.world, message));
  }

  /** Records a file of a new message; its attachment object as Discord returns it. */
  private recordUpload(messageId: string, channelId: string, file: FormPart, index: number, content: string, nonce: string | undefined): Json {
    const sha256 = createHash('sha256').update(file.data).digest('hex');
    const name = file.filename ?? `file${index}`;
    const type = file.contentType ? { contentType: file.contentType } : {};
    this.uploads.push({ channelId, messageId, name, size: file.data.length, sha256, ...type, ...(content ? { caption: content } : {}), ...(nonce ? { nonce } : {}) });
    const id = this.world.nextId();
    const url = `https://cdn.discordapp.com/attachments/${channelId}/${id}/${encodeURIComponent(name)}`;
    return { id, filename: name, size: file.data.length, url, proxy_url: url, ...(file.contentType ? { content_type: file.contentType } : {}) };
  }

  private editBotMessage(id: string, body: Json): Result {
    const message = this.world.message(id);
    if (!message || message.deleted || message.interactionId) return unknownMessage();
    if (message.authorId !== this.world.bot.id) return { status: 403, body: { message: 'Cannot edit a message authored by another user', code: 50005 } };
    return this.applyEdit(message, body);
  }

  private applyEdit(message: StoredMessage, body: Json): Result {
    if (typeof body.content === 'string' && body.content.length > 2000) return tooLong();
    this.world.editMessage(message, {
      content: typeof body.content === 'string' ? body.content : undefined,
      components: Array.isArray(body.components) ? body.components : undefined,
      flags: message.flags & ~LOADING,
    });
    if (!message.visibleTo) this.gateway.dispatch('MESSAGE_UPDATE', messageJson(this.world, message, true));
    return ok(messageJson(this.world, message));
  }

  private deleteBotMessage(id: string): Result {
    const message = this.world.message(id);
    if (!message || message.deleted) return unknownMessage();
    message.deleted = true;
    this.gateway.dispatch('MESSAGE_DELETE', { id, channel_id: message.channelId });
    return { status: 204 };
  }

  private putCommands(where: string, body: unknown): Result {
    const list = (Array.isArray(body) ? body : []) as Json[];
    const stored = list.map((command) => ({ ...command, id: this.world.nextId(), application_id: this.world.applicationId, version: this.world.nextId(), ...(where === 'global' ? {} : { guild_id: where }) }));
    this.commands.set(where, stored);
    return ok(stored);
  }

  private getGuild(guildId: string): Result {
    const guild = this.world.guildById(guildId);
    return guild ? ok(guildCreateJson(this.world, [], guild)) : unknownGuild();
  }

  private getMember(guildId: string, userId: string): Result {
    if (!this.world.guildById(guildId)) return unknownGuild();
    if (!this.world.members.has(userId)) return { status: 404, body: { message: 'Unknown Member', code: 10007 } };
    return ok(memberJson(this.world, userId));
  }

  private callback(id: string, token: string, call: Call): Result {
    const interaction = this.world.interactionByToken(id, token);
    if (!interaction || Date.now() - interaction.createdAt > ACK_DEADLINE_MS) return unknownInteraction();
    if (interaction.callbacks.length) return { status: 400, body: { message: 'Interaction has already been acknowledged.', code: 40060 } };
    const type = Number(call.body?.type);
    const data = call.body?.data as Json | undefined;
    interaction.callbacks.push({ type, data, at: Date.now() });
    if (type === 4 || type === 5) this.createOriginal(interaction, type, data ?? {});
    if (type === 7 && interaction.messageId) this.applyEdit(this.world.message(interaction.messageId)!, data ?? {});
    return { status: 204 };
  }

  private createOriginal(interaction: FakeInteraction, type: 4 | 5, data: Json): void {
    const flags = Number(data.flags ?? 0) & EPHEMERAL;
    const message = this.interactionMessage(interaction, type === 5 ? '' : String(data.content ?? ''), flags | (type === 5 ? LOADING : 0), data);
    interaction.originalMessageId = message.id;
  }

  private interactionMessage(interaction: FakeInteraction, content: string, flags: number, data: Json): StoredMessage {
    const message = this.world.addMessage({
      channelId: interaction.channelId,
      authorId: this.world.bot.id,
      content,
      components: (data.components as unknown[] | undefined) ?? [],
      flags,
      interactionId: interaction.id,
      visibleTo: flags & EPHEMERAL ? interaction.userId : undefined,
    });
    if (!message.visibleTo) this.gateway.dispatch('MESSAGE_CREATE', messageJson(this.world, message, true));
    return message;
  }

  private webhookMessage(token: string, id: string): StoredMessage | undefined {
    const interaction = this.world.interactionByToken(undefined, token);
    const messageId = id === '@original' ? interaction?.originalMessageId : id;
    const message = messageId ? this.world.message(messageId) : undefined;
    return message && !message.deleted && message.interactionId === interaction?.id ? message : undefined;
  }

  private editWebhookMessage(token: string, id: string, body: Json): Result {
    const message = this.webhookMessage(token, id);
    return message ? this.applyEdit(message, body) : unknownMessage();
  }

  private deleteWebhookMessage(token: string, id: string): Result {
    const message = this.webhookMessage(token, id);
    if (!message) return unknownMessage();
    message.deleted = true;
    return { status: 204 };
  }

  /** The first follow-up after a deferred reply replaces its "thinking…" message, as on Discord. */
  private followUp(token: string, body: Json): Result {
    const interaction = this.world.interactionByToken(undefined, token);
    if (!interaction) return { status: 404, body: { message: 'Unknown Webhook', code: 10015 } };
    const original = this.webhookMessage(token, '@original');
    if (original && original.flags & LOADING) return this.applyEdit(original, body);
    const message = this.interactionMessage(interaction, String(body.content ?? ''), Number(body.flags ?? 0) & EPHEMERAL, body);
    interaction.followupIds.push(message.id);
    return ok(messageJson(this.world, message));
  }
}

function ok(body: unknown): Result {
  return { status: 200, body };
}

function unknownGuild(): Result {
  return { status: 404, body: { message: 'Unknown Guild', code: 10004 } };
}

function unknownChannel(): Result {
  return { status: 404, body: { message: 'Unknown Channel', code: 10003 } };
}

function unknownMessage(): Result {
  return { status: 404, body: { message: 'Unknown Message', code: 10008 } };
}

function unknownInteraction(): Result {
  return { status: 404, body: { message: 'Unknown interaction', code: 10062 } };
}

function tooLong(): Result {
  return { status: 400, body: { message: 'Invalid Form Body', code: 50035, errors: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] } } } };
}

function failureResult(failure: QueuedFailure): Result {
  if (failure.status === 429) return rateLimited(failure.retryAfter);
  if (failure.status === 413) return { status: 413, body: { message: 'Request entity too large', code: 40005 } };
  return { status: failure.status, body: { message: 'Bad Gateway', code: 0 } };
}

function rateLimited(retryAfter: number): Result {
  return {
    status: 429,
    body: { message: 'You are being rate limited.', retry_after: retryAfter, global: false },
    headers: {
      'retry-after': String(Math.ceil(retryAfter)),
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(Date.now() / 1000 + retryAfter),
      'x-ratelimit-reset-after': String(retryAfter),
      'x-ratelimit-bucket': 'fake-bucket',
      'x-ratelimit-scope': 'user',
    },
  };
}

/**
 * The request's JSON body, or for multipart (a message with files, as
 * discord.js sends it) the `payload_json` part as the body and the
 * `files[n]` parts as its files.
 */
async function readBody(request: IncomingMessage): Promise<{ body: Json | undefined; files: FormPart[] }> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const type = request.headers['content-type'] ?? '';
  if (type.includes('multipart/form-data')) {
    const parts = parseMultipart(raw, type);
    const payload = parts.find((part) => part.name === 'payload_json');
    return { body: payload ? parseJson(payload.data.toString('utf8')) : undefined, files: parts.filter((part) => /^files\[\d+\]$/.test(part.name)) };
  }
  return { body: parseJson(raw.toString('utf8')), files: [] };
}

function parseJson(text: string): Json | undefined {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}
