/**
 * A fake Discord (REST + gateway) on 127.0.0.1 for tests that run the real
 * discord.js client against it. Point the client at `apiUrl`: discord.js finds
 * the gateway through `GET /gateway/bot`. With `shards`, it recommends that
 * many gateway shards and sends each guild's events only to its shard.
 *
 * @example
 * const discord = await startFakeDiscord();
 * const alice = discord.addMember('Alice');
 * await discord.userMessage({ channelId: discord.dmChannel(alice).id, author: alice, content: 'hi' });
 * await discord.close();
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeGateway, type IdentifyRecord } from './gateway.js';
import { channelJson, guildCreateJson, interactionJson, messageJson } from './payloads.js';
import { FakeRest, type QueuedFailure, type RecordedRequest, type UploadRecord } from './rest.js';
import { World, type FakeChannel, type FakeGuild, type FakeInteraction, type FakeUser, type StoredMessage } from './world.js';

export type { FakeChannel, FakeGuild, FakeInteraction, FakeUser, StoredMessage } from './world.js';
export { shardOf } from './world.js';
export type { RecordedRequest, UploadRecord } from './rest.js';

/** A user's message to inject. */
export interface UserMessageOptions {
  channelId: string;
  author: FakeUser;
  content: string;
  /** Users mentioned (their `<@id>` should be in the content). */
  mentions?: FakeUser[];
  mentionRoleIds?: string[];
  mentionEveryone?: boolean;
  /** The message this one replies to. */
  replyTo?: string;
  /** Files attached; served from the fake's CDN at `/attachments/<channel>/<id>/<name>`, as Discord's signed URLs. */
  files?: FileInput[];
  /** A voice message: flag IS_VOICE_MESSAGE, its one file with `duration_secs` and `waveform`, as the client records it. */
  voice?: { durationSecs: number };
}

/** Discord's message flag of a voice message. */
export const IS_VOICE_MESSAGE = 1 << 13;

/** A file a user attaches. */
export interface FileInput {
  name: string;
  contentType?: string;
  bytes: Buffer;
}

/** A slash command option as Discord sends it. */
export interface CommandOption {
  name: string;
  type: number;
  value?: string | number | boolean;
  options?: CommandOption[];
  focused?: boolean;
}

/** The running fake and its helpers. */
export interface FakeDiscord {
  /** REST base to put in the config (`http://127.0.0.1:<port>/api`). */
  readonly apiUrl: string;
  readonly token: string;
  readonly bot: FakeUser;
  readonly applicationId: string;
  readonly guildId: string;
  /** Role ids: `admin` (Administrator), `manager` (Manage Server), `bot` (the bot's managed role). */
  readonly roleIds: { everyone: string; admin: string; manager: string; bot: string };
  /** A guild text channel that exists from the start. */
  readonly general: FakeChannel;
  readonly requests: RecordedRequest[];
  /** Files the bot sent with messages (name, size, hash, caption). */
  readonly uploads: UploadRecord[];
  readonly identifies: IdentifyRecord[];
  /** Number of successful RESUMEs. */
  readonly resumes: number;
  /** Whether a gateway login has an open socket. */
  readonly connected: boolean;
  /** The `[id, count]` of each gateway login with an open socket. */
  readonly connectedShards: [number, number][];
  /** Commands registered by PUT: key `global` or a guild id. */
  readonly commands: Map<string, Record<string, unknown>[]>;
  readonly interactions: FakeInteraction[];
  /** Adds a guild member; `listed` members appear in GUILD_CREATE (others only through REST). */
  addMember(name: string, options?: { roles?: ('admin' | 'manager')[]; bot?: boolean; listed?: boolean; id?: string }): FakeUser;
  /** Adds a user who is not in the guild. */
  addUser(name: string): FakeUser;
  /**
   * Adds a guild the bot is in, with the main guild's members and roles, on
   * shard `shard[0]` of `shard[1]` when given (GUILD_CREATE is dispatched to it).
   */
  addGuild(name: string, options?: { shard?: [number, number] }): FakeGuild;
  /** A new guild text channel, in the main guild unless `guildId` is given (CHANNEL_CREATE is dispatched). */
  createTextChannel(name?: string, guildId?: string): FakeChannel;
  /** A new public thread under `parentId` (THREAD_CREATE is dispatched). */
  createThread(parentId: string, name?: string): FakeChannel;
  /** The DM channel of a user. */
  dmChannel(user: FakeUser): FakeChannel;
  /** A user writes a message (MESSAGE_CREATE). */
  userMessage(options: UserMessageOptions): StoredMessage;
  /** A user presses a button of a message (INTERACTION_CREATE type 3). */
  pressButton(user: FakeUser, messageId: string, customId: string): FakeInteraction;
  /** A user runs a slash command (INTERACTION_CREATE type 2). */
  runCommand(user: FakeUser, channelId: string, name: string, options?: CommandOption[]): FakeInteraction;
  /** A user types in an autocompleted option (INTERACTION_CREATE type 4). */
  autocomplete(user: FakeUser, channelId: string, name: string, options: CommandOption[]): FakeInteraction;
  /** Messages of a channel, oldest first (deleted and ephemeral ones included). */
  messagesIn(channelId: string): StoredMessage[];
  message(id: string): StoredMessage | undefined;
  /** Ephemeral messages shown to a user, oldest first. */
  ephemeralFor(userId: string): StoredMessage[];
  /** Closes the gateway socket from the server side (4000: the client resumes). */
  dropGateway(code?: number): void;
  /**
   * Leaves the open gateway sockets open but silent: heartbeats go unacknowledged
   * and dispatches wait for a resume on a new socket, which is served as usual.
   */
  stallGateway(): void;
  /** Heartbeats that went unanswered on a stalled socket. */
  readonly unansweredHeartbeats: number;
  /**
   * The next request matching `method` and `path` (without `/api/v10`) fails, by
   * default with a 429; with `afterHandling`, it is carried out and only its
   * response is lost.
   */
  failNext(method: string, path: string | RegExp, options?: { status?: number; retryAfter?: number; afterHandling?: boolean; withFiles?: boolean }): void;
  /** Polls `check` until it returns a truthy value. */
  waitFor<T>(check: () => T | undefined | null | false, timeoutMs?: number): Promise<T>;
  /** Lets every attachment URL handed out so far expire (the CDN answers 404); `POST /attachments/refresh-urls` gives new ones. */
  expireAttachmentUrls(): void;
  close(): Promise<void>;
}

/** How the fake is set up. */
export interface FakeDiscordOptions {
  /** The bot token the fake accepts. */
  token?: string;
  /** Privileged intents not switched on in the "Developer Portal" (e.g. Message Content, 1 << 15). */
  disallowedIntents?: number;
  /** The shard count `GET /gateway/bot` recommends (default 1). */
  shards?: number;
  /** The heartbeat interval sent in HELLO (default Discord's 41 250 ms). */
  heartbeatIntervalMs?: number;
}

/** Starts the fake on a free port. */
export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const world = new World(options.token ?? 'fake-discord-bot-token');
  const listed = new Set<string>();
  const general = addChannel(world, { type: 0, name: 'general', guildId: world.guild.id });
  let base = '';
  const gatewayUrl = () => `ws://${base}/gateway`;
  const gateway = new FakeGateway(world, gatewayUrl, () => [...listed]);
  gateway.disallowedIntents = options.disallowedIntents ?? 0;
  gateway.recommendedShards = options.shards ?? 1;
  if (options.heartbeatIntervalMs) gateway.heartbeatIntervalMs = options.heartbeatIntervalMs;
  const rest = new FakeRest(world, gateway, gatewayUrl);
  const cdn = new Map<string, Buffer>();
  /** The signature (`hm`) each attachment's URL must carry now. */
  const signatures = new Map<string, string>();
  rest.refreshAttachmentUrls = (urls) =>
    urls.flatMap((original) => {
      const url = new URL(original);
      const signature = signatures.get(url.pathname);
      if (!signature) return [];
      url.searchParams.set('hm', signature);
      url.searchParams.set('ex', Math.floor(Date.now() / 1000 + 86_400).toString(16));
      return [{ original, refreshed: url.href }];
    });
  const server = createServer((request, response) => {
    if (request.url?.startsWith('/attachments/')) return serveAttachment(cdn, signatures, request.url, response);
    rest.handle(request, response).catch((error: unknown) => {
      response.writeHead(500).end(String(error));
    });
  });
  server.on('upgrade', (request, socket, head) => {
    if (request.url?.startsWith('/gateway')) gateway.upgrade(request, socket, head);
    else socket.destroy();
  });
  await listen(server);
  base = `127.0.0.1:${(server.address() as AddressInfo).port}`;

  const interact = (type: 2 | 3 | 4, user: FakeUser, channelId: string, data: Record<string, unknown>, messageId?: string) => {
    const channel = world.channel(channelId);
    if (!channel) throw new Error(`fake discord: unknown channel ${channelId}`);
    const interaction: FakeInteraction = {
      id: world.nextId(),
      token: `itoken-${world.nextId()}`,
      type,
      userId: user.id,
      channelId,
      guildId: channel.guildId,
      data,
      messageId,
      createdAt: Date.now(),
      callbacks: [],
      followupIds: [],
    };
    world.interactions.push(interaction);
    gateway.dispatch('INTERACTION_CREATE', interactionJson(world, interaction));
    return interaction;
  };
  const commandData = (name: string, options: CommandOption[] | undefined) => {
    const registered = [...rest.commands.values()].flat().find((command) => command.name === name);
    return { id: String(registered?.id ?? world.nextId()), name, type: 1, options: options ?? [] };
  };

  return {
    expireAttachmentUrls() {
      for (const path of signatures.keys()) signatures.set(path, world.nextId());
    },
    apiUrl: `http://${base}/api`,
    token: world.token,
    bot: world.bot,
    applicationId: world.applicationId,
    guildId: world.guild.id,
    roleIds: {
      everyone: world.roles.everyone.id,
      admin: world.roles.admin.id,
      manager: world.roles.manager.id,
      bot: world.roles.bot.id,
    },
    general,
    requests: rest.requests,
    uploads: rest.uploads,
    identifies: gateway.identifies,
    get resumes() {
      return gateway.resumes;
    },
    get connected() {
      return gateway.connected;
    },
    get connectedShards() {
      return gateway.connectedShards;
    },
    commands: rest.commands,
    interactions: world.interactions,
    addMember(name, memberOptions = {}) {
      const user = world.addUser(name, memberOptions.bot ?? false, memberOptions.id);
      const roles = (memberOptions.roles ?? []).map((role) => world.roles[role].id);
      world.members.set(user.id, roles);
      if (memberOptions.listed) listed.add(user.id);
      return user;
    },
    addUser: (name) => world.addUser(name),
    addGuild(name, guildOptions = {}) {
      const guild = world.addGuild(name, guildOptions.shard);
      gateway.dispatch('GUILD_CREATE', guildCreateJson(world, [world.bot.id, ...listed], guild), guild.id);
      return guild;
    },
    createTextChannel(name, guildId = world.guild.id) {
      const channel = addChannel(world, { type: 0, name: name ?? `room-${world.channels.size}`, guildId });
      gateway.dispatch('CHANNEL_CREATE', channelJson(world, channel));
      return channel;
    },
    createThread(parentId, name) {
      const guildId = world.channel(parentId)?.guildId ?? world.guild.id;
      const channel = addChannel(world, { type: 11, name: name ?? `thread-${world.channels.size}`, guildId, parentId });
      gateway.dispatch('THREAD_CREATE', { ...channelJson(world, channel), newly_created: true });
      return channel;
    },
    dmChannel: (user) => world.dmChannel(user.id),
    userMessage(message) {
      const stored = world.addMessage({
        channelId: message.channelId,
        authorId: message.author.id,
        content: message.content,
        mentionIds: (message.mentions ?? []).map((user) => user.id),
        mentionRoleIds: message.mentionRoleIds ?? [],
        mentionEveryone: message.mentionEveryone ?? false,
        replyToId: message.replyTo,
        attachments: (message.files ?? []).map((file) => ({
          ...attachmentJson(world, cdn, signatures, `http://${base}`, message.channelId, file),
          ...(message.voice ? { duration_secs: message.voice.durationSecs, waveform: Buffer.alloc(32, 128).toString('base64') } : {}),
        })),
        ...(message.voice ? { flags: IS_VOICE_MESSAGE } : {}),
      });
      gateway.dispatch('MESSAGE_CREATE', messageJson(world, stored, true));
      return stored;
    },
    pressButton(user, messageId, customId) {
      const message = world.message(messageId);
      if (!message) throw new Error(`fake discord: unknown message ${messageId}`);
      return interact(3, user, message.channelId, { custom_id: customId, component_type: 2 }, messageId);
    },
    runCommand: (user, channelId, name, options) => interact(2, user, channelId, commandData(name, options)),
    autocomplete: (user, channelId, name, options) => interact(4, user, channelId, commandData(name, options)),
    messagesIn: (channelId) => world.messages.filter((message) => message.channelId === channelId),
    message: (id) => world.message(id),
    ephemeralFor: (userId) => world.messages.filter((message) => message.visibleTo === userId),
    dropGateway: (code) => gateway.drop(code),
    stallGateway: () => gateway.stall(),
    get unansweredHeartbeats() {
      return gateway.unansweredHeartbeats;
    },
    failNext(method, path, failure = {}) {
      const queued: QueuedFailure = {
        method,
        path,
        status: failure.status ?? 429,
        retryAfter: failure.retryAfter ?? 1,
        afterHandling: failure.afterHandling ?? false,
        ...(failure.withFiles ? { withFiles: true } : {}),
      };
      rest.failures.push(queued);
    },
    waitFor,
    async close() {
      await gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `check` every 20 ms until it returns a truthy value or the time is up. */
export async function waitFor<T>(check: () => T | undefined | null | false, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`fake discord: condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** An attachment as a message carries it, its bytes put on the CDN under a signed URL (`ex`, `is`, `hm`). */
function attachmentJson(world: World, cdn: Map<string, Buffer>, signatures: Map<string, string>, origin: string, channelId: string, file: FileInput): Record<string, unknown> {
  const id = world.nextId();
  const path = `/attachments/${channelId}/${id}/${encodeURIComponent(file.name)}`;
  cdn.set(path, file.bytes);
  signatures.set(path, id);
  const url = `${origin}${path}?ex=${Math.floor(Date.now() / 1000 + 86_400).toString(16)}&is=0&hm=${id}`;
  return { id, filename: file.name, size: file.bytes.length, url, proxy_url: url, ...(file.contentType ? { content_type: file.contentType } : {}) };
}

/** The CDN: a file's bytes for its signed URL. */
function serveAttachment(cdn: Map<string, Buffer>, signatures: Map<string, string>, requestUrl: string, response: ServerResponse): void {
  const url = new URL(requestUrl, 'http://cdn');
  const bytes = cdn.get(url.pathname);
  // A missing, wrong or expired signature: 404, as Discord answers.
  if (!bytes || url.searchParams.get('hm') !== signatures.get(url.pathname)) return void response.writeHead(404).end('Not Found');
  response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) }).end(bytes);
}

function addChannel(world: World, fields: Omit<FakeChannel, 'id'>): FakeChannel {
  const channel = { id: world.nextId(), ...fields };
  world.channels.set(channel.id, channel);
  return channel;
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
}
