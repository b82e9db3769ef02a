/**
 * The Bolt app and how Slack reaches it: a Socket Mode WebSocket (default; no
 * public URL needed) or an HTTP endpoint whose requests Bolt verifies with the
 * signing secret. The receivers are built here rather than by Bolt so that the
 * adapter can wait for them to stop and learn the port it listens on.
 */
import type { AddressInfo } from 'node:net';
import { App, HTTPReceiver, SocketModeReceiver, type Logger as BoltLogger, type ReceiverEvent, type webApi } from '@slack/bolt';
import type { Config } from '../../config/schema.js';
import { ConfigError } from '../../errors.js';
import type { ChannelHealth } from '../types.js';
import type { BotIdentity } from './web-api.js';

/** How long `stop()` waits for Slack to acknowledge the WebSocket's close frame. */
const SOCKET_CLOSE_TIMEOUT_MS = 2_000;

/** A WebSocket's readyState when open. */
const WEBSOCKET_OPEN = 1;

/** The Socket Mode client's lifecycle events, as it names them. */
const SOCKET_STATES = ['connecting', 'connected', 'reconnecting', 'disconnecting', 'disconnected'] as const;

/** Where the Socket Mode client is in its lifecycle. */
type SocketState = (typeof SOCKET_STATES)[number] | 'not started';

/** The path Slack posts events, interactions and commands to in HTTP mode. */
export const HTTP_EVENTS_PATH = '/slack/events';

/** What the connection is built from. */
export interface ConnectionOptions {
  config: Config['slack'];
  bot: BotIdentity;
  clientOptions: webApi.WebClientOptions;
  logger: BoltLogger;
  /** Interface the HTTP receiver binds (all interfaces when unset). */
  httpHost?: string;
}

/** A Bolt app with its receiver, started and stopped as one. */
export interface SlackConnection {
  readonly app: App;
  /** Resolves once Slack's `hello` arrived (Socket Mode) or the server listens (HTTP). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The HTTP port listened on (HTTP mode, once started). */
  readonly port: number | undefined;
  /** Socket Mode: ready while the socket is open and Slack said hello. HTTP: ready while the server listens. */
  health(): ChannelHealth;
}

/** Checks that the tokens a mode needs are set, before anything connects. */
export function assertCredentials(config: Config['slack']): void {
  const issues: string[] = [];
  if (!config.botToken) issues.push('slack.botToken (SLACK_BOT_TOKEN): missing; expected the xoxb- bot token');
  if (config.mode === 'socket' && !config.appToken) {
    issues.push('slack.appToken (SLACK_APP_TOKEN): missing; Socket Mode needs an xapp- token with connections:write');
  }
  if (config.mode === 'http' && !config.signingSecret) {
    issues.push('slack.signingSecret (SLACK_SIGNING_SECRET): missing; HTTP mode verifies requests with it');
  }
  if (issues.length) throw new ConfigError(issues);
}

/** Builds the app and its receiver for the configured mode. */
export function createConnection(options: ConnectionOptions): SlackConnection {
  return options.config.mode === 'http' ? httpConnection(options) : socketConnection(options);
}

function createApp(options: ConnectionOptions, receiver: SocketModeReceiver | HTTPReceiver): App {
  return new App({
    token: options.config.botToken,
    // Known from our own auth.test, so Bolt does not call it again (and ignoreSelf has them).
    botId: options.bot.botId,
    botUserId: options.bot.userId,
    receiver,
    logger: options.logger,
    clientOptions: { ...options.clientOptions },
    convoStore: false,
  });
}

function socketConnection(options: ConnectionOptions): SlackConnection {
  const receiver = new SocketModeReceiver({
    appToken: options.config.appToken ?? '',
    logger: options.logger,
    // The Socket Mode client's own Web API client calls apps.connections.open through these.
    installerOptions: { clientOptions: { ...options.clientOptions } },
  });
  const app = createApp(options, receiver);
  holdEventAcks(receiver, app);
  // The client reconnects by itself (its own pings find a silent socket); this only follows it.
  let state: SocketState = 'not started';
  for (const name of SOCKET_STATES) receiver.client.on(name, () => (state = name));
  return {
    app,
    port: undefined,
    start: async () => {
      await receiver.start();
    },
    stop: () => withTimeout(receiver.client.disconnect(), SOCKET_CLOSE_TIMEOUT_MS),
    health: () => {
      const open = receiver.client.websocket?.readyState === WEBSOCKET_OPEN;
      if (state === 'connected' && open) return { ready: true };
      return { ready: false, reason: `slack: Socket Mode ${state === 'connected' ? 'socket closed; reconnecting' : state}` };
    },
  };
}

/**
 * Bolt acknowledges an Events API envelope before its listeners run. Here the
 * acknowledgement waits for them (they resolve once the message is stored), so
 * an envelope Slack was told about is never one a crash lost: an instance that
 * dies first leaves it unacknowledged, and Slack delivers it again.
 */
function holdEventAcks(receiver: SocketModeReceiver, app: App): void {
  receiver.init({
    processEvent: async (event: ReceiverEvent) => {
      if ((event.body as { type?: string }).type !== 'event_callback') return app.processEvent(event);
      const ack = event.ack;
      let response: Parameters<ReceiverEvent['ack']>[0];
      event.ack = (value) => {
        response = value;
        return Promise.resolve();
      };
      try {
        await app.processEvent(event);
      } finally {
        await ack(response);
      }
    },
  } as App);
}

function httpConnection(options: ConnectionOptions): SlackConnection {
  const receiver = new HTTPReceiver({
    signingSecret: options.config.signingSecret ?? '',
    endpoints: HTTP_EVENTS_PATH,
    port: options.config.port,
    logger: options.logger,
    processBeforeResponse: false,
  });
  const app = createApp(options, receiver);
  let port: number | undefined;
  return {
    app,
    get port() {
      return port;
    },
    start: async () => {
      const listen = options.httpHost ? { port: options.config.port, host: options.httpHost } : options.config.port;
      const server = await receiver.start(listen);
      port = (server.address() as AddressInfo).port;
    },
    stop: async () => {
      if (port !== undefined) await receiver.stop();
      port = undefined;
    },
    health: () => (port !== undefined ? { ready: true } : { ready: false, reason: 'slack: the HTTP server is not listening' }),
  };
}

function withTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    promise.then(done, done);
  });
}
