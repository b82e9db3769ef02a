/**
 * `/console` as a feature of the running agent: in a DM, an owner or admin
 * gets a one-time sign-in link to the web console (ten minutes, one use).
 * Plugged in by the composition root only when `console.enabled` is true and
 * an HTTP port is set, and loaded only then.
 */
import type { CommandSpec } from '../../channels/types.js';
import { qualifiedUserId } from '../../channels/types.js';
import type { Feature, FeatureCommand } from '../../engine/feature.js';
import type { ConsoleAccess } from './access.js';
import { LINK_TTL_MS, type SignInLinks } from './sign-in-links.js';

/** The `/console` command. */
export const CONSOLE_COMMAND: CommandSpec = { name: 'console', description: 'A sign-in link to the web console (owners and admins, in a DM)' };

/** The path a link opens, with its token. */
export function signInPath(token: string): string {
  return `/console/sign-in?t=${token}`;
}

/** `/console` with its handler; `baseUrl` is known once the HTTP endpoint listens. */
export function consoleCommand(links: SignInLinks, access: ConsoleAccess, baseUrl: () => string | undefined): FeatureCommand {
  return {
    spec: CONSOLE_COMMAND,
    async run(event) {
      if (event.chat.kind !== 'dm') return { text: 'Send /console to me in a direct message: a sign-in link is for you alone.', private: true };
      const holder = { userId: qualifiedUserId(event.chat.channel, event.sender.id), name: event.sender.name };
      if (!(await access.viewerFor(holder))) return { text: 'Only an owner or an admin of this bot (or of a group it is in) can open the console.', private: true };
      const base = baseUrl();
      if (!base) return { text: 'The console is not listening yet; try again in a moment.', private: true };
      const token = await links.issue(holder);
      return { text: `Your console sign-in link, valid ${LINK_TTL_MS / 60_000} minutes and for one use:\n${base}${signInPath(token)}`, private: true };
    },
  };
}

/** The console as a feature: its command only (the pages are served by the HTTP endpoint). */
export function consoleFeature(command: FeatureCommand): Feature {
  return { name: 'console', commands: [command], start: async () => undefined, stop: async () => undefined };
}
