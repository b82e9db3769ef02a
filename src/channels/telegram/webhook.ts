/**
 * Webhook mode: a plain node HTTP server at `telegram.webhook.host:port` whose
 * `path` hands Telegram's POSTs to grammY's webhookCallback. Requests without
 * the right X-Telegram-Bot-Api-Secret-Token are refused with 401.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookCallback, type Bot } from 'grammy';
import type { Logger } from '../../log.js';
import { describeError } from './errors.js';

/** Where the server listens and what it checks. */
export interface WebhookServerSettings {
  bot: Bot;
  host: string;
  port: number;
  path: string;
  secretToken: string;
  log: Logger;
}

/** The listening webhook server. */
export class WebhookServer {
  private constructor(private readonly server: Server) {}

  /** Starts listening; resolves once the port is bound. */
  static async listen(settings: WebhookServerSettings): Promise<WebhookServer> {
    const handle = webhookCallback(settings.bot, 'http', {
      secretToken: settings.secretToken,
      onTimeout: 'return',
    });
    const server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      if (req.method !== 'POST' || path !== settings.path) {
        res.writeHead(404).end();
        return;
      }
      handle(req, res).catch((error: unknown) => {
        settings.log.error({ error: describeError(error) }, 'telegram: webhook update failed');
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(settings.port, settings.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new WebhookServer(server);
  }

  /** The bound port (useful when configured as 0). */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Stops accepting requests and drops open connections. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }
}
