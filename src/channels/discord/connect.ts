/**
 * Logging in: resolves once the gateway connection is ready and the guilds are
 * cached, or fails with a ChannelError (bad token, unreachable API, timeout).
 * Reconnects and resumes after that are discord.js's job.
 */
import { once } from 'node:events';
import { Events, type Client } from 'discord.js';
import { ChannelError } from '../../errors.js';
import { toChannelError } from './errors.js';

/** Logs `client` in and waits for its ready event. */
export async function connectClient(client: Client, token: string, timeoutMs: number): Promise<void> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new ChannelError('discord', `gateway not ready after ${timeoutMs} ms`, true)),
    timeoutMs,
  );
  const ready = once(client, Events.ClientReady, { signal: controller.signal });
  // Observed here so that a failed login does not leave it rejecting unhandled.
  ready.catch(() => undefined);
  try {
    await client.login(token);
    await ready;
  } catch (error) {
    await client.destroy();
    throw toChannelError(controller.signal.aborted ? controller.signal.reason : error, 'connect to Discord');
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}
