/**
 * The web console (SPEC section 18), loaded by the composition root only when
 * `console.enabled` is true and an HTTP port is set: {@link prepareConsole}
 * makes the `/console` command while the application is built; `serve` makes
 * the request handler the operations endpoint mounts once the runtime exists.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../config/schema.js';
import type { AgentServices } from '../../engine/services.js';
import type { Feature } from '../../engine/feature.js';
import type { Logger } from '../../log.js';
import type { Store } from '../../store/store.js';
import { ConsoleAccess } from './access.js';
import { CLI_KEY_FILE } from './cli-key.js';
import { ConsoleAssets } from './assets.js';
import type { ConsoleDeps } from './deps.js';
import { ConversationDirectory } from './directory.js';
import { ErrorCounter } from './errors-window.js';
import { consoleCommand, consoleFeature } from './feature.js';
export { CONSOLE_COMMAND } from './feature.js';
import { LiveFeed } from './live.js';
import { handleConsole } from './routes.js';
import { Sessions } from './sessions.js';
import { ThreadMarks } from './thread-marks.js';
import { SignInLinks } from './sign-in-links.js';


/** Where `npm run build` puts the bundle: dist/console under the project root (this module is three folders below it, compiled or not). */
export function defaultAssetsDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'dist', 'console');
}

/** The console while the application is built. */
export interface PreparedConsole {
  /** `/console`, to plug into the runtime. */
  feature: Feature;
  /** The handler for the operations endpoint, once the runtime exists. */
  serve(rest: Omit<ConsoleDeps, 'config' | 'store' | 'log' | 'directory' | 'services' | 'marks'> & { assetsDir?: string }): ConsoleServer;
  /** Called once the endpoint listens, with its base URL (`http://127.0.0.1:8080`). */
  listening(baseUrl: string): void;
}

/** The mounted console. */
export interface ConsoleServer {
  /** Handles a request under `/console`; false for other paths. */
  handle(request: IncomingMessage, response: ServerResponse): Promise<boolean>;
  close(): void;
}

/** Builds the console's command and state from the application's parts. */
export function prepareConsole(parts: { config: Config; store: Store; services: ConsoleDeps['services'] & AgentServices; log: Logger }): PreparedConsole {
  const { config, store, services } = parts;
  const log = parts.log.child({ part: 'console' });
  const directory = new ConversationDirectory(store);
  const links = new SignInLinks(store);
  const access = new ConsoleAccess(config, (name) => services.outbox.channelOf({ channel: name, chatId: '' }), directory, log);
  let base: string | undefined;
  const offDirectory = directory.follow(services.events, services.history, log);
  const marks = new ThreadMarks();
  const offMarks = marks.follow(services.events);
  return {
    feature: consoleFeature(consoleCommand(links, access, () => base)),
    listening(baseUrl) {
      base = baseUrl;
    },
    serve(rest) {
      const deps: ConsoleDeps = { ...rest, config, store, services, directory, marks, log };
      const errors = new ErrorCounter();
      const offErrors = errors.follow(services.events);
      const live = new LiveFeed(services.events, rest.traces);
      const assets = new ConsoleAssets(rest.assetsDir ?? defaultAssetsDir());
      const cliKey = randomBytes(32).toString('base64url');
      // Whoever can read the data folder is at the machine: that is what `pincer console-link` proves.
      writeFileSync(join(config.dataDir, CLI_KEY_FILE), `${cliKey}\n`, { mode: 0o600 });
      const routeParts = { deps, links, sessions: new Sessions(store), access, assets, live, errors, cliKey, baseUrl: () => base ?? '', ...(config.owners[0] ? { cliOwner: config.owners[0] } : {}) };
      return {
        handle: (request, response) => handleConsole(routeParts, request, response),
        close() {
          offErrors();
          offDirectory();
          offMarks();
          live.close();
        },
      };
    },
  };
}
