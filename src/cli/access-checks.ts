/**
 * The access checks of `pincer doctor`: for each configured channel, who may
 * use it. A channel that admits everyone is a warning; it is a failure when
 * people could also act on this machine there (the shell, writing files)
 * without an admin policy that asks every time. Also the files the one shared
 * workspace of older versions left behind.
 */
import type { Config } from '../config/schema.js';
import { Store } from '../store/store.js';
import { leftoverWorkspaceNotice } from '../tools/builtin/index.js';
import { createPolicyStore, GLOBAL_SCOPE } from '../tools/policy.js';
import type { PolicyMode } from '../tools/types.js';
import { fail, messageOf, pass, type CheckResult } from './check-result.js';
import { channelAccess, closeChannelFix, machineTools, openChannelText, type ChannelAccess } from './open-channels.js';

/** One line per configured chat channel: closed, open (a warning), or open to acting on this machine (a failure). */
export async function checkAccess(config: Config): Promise<CheckResult[]> {
  const channels = channelAccess(config);
  const unguarded = channels.some((entry) => entry.open) ? await unguardedTools(config) : { tools: [] };
  return channels.map((entry) => accessResult(entry, unguarded));
}

/** A warning line when the old shared workspace left files behind, else none. */
export async function checkLeftoverWorkspace(config: Config): Promise<CheckResult[]> {
  const notice = await leftoverWorkspaceNotice(config);
  return notice ? [{ name: 'workspaces', status: 'warn', detail: notice }] : [];
}

/** Machine tools whose global policy lets a person approve them for themselves, and why the policy is unknown, if it is. */
interface Unguarded {
  tools: string[];
  unread?: string;
}

function accessResult(entry: ChannelAccess, unguarded: Unguarded): CheckResult {
  const name = `${entry.channel} access`;
  if (!entry.open) return pass(name, `only the ${entry.lists.users.length} listed user${entry.lists.users.length === 1 ? '' : 's'} and the owners`);
  if (unguarded.tools.length === 0) return { name, status: 'warn', detail: openChannelText(entry.channel), fix: closeChannelFix(entry.channel) };
  const tools = unguarded.tools.join(' and ');
  const why = unguarded.unread ? ` (the stored policy could not be read: ${unguarded.unread})` : '';
  return fail(
    name,
    `${openChannelText(entry.channel)}, and anyone there may approve ${tools} for themselves: no admin policy asks${why}`,
    `${closeChannelFix(entry.channel)}; or, as an owner in a DM with the bot, ${unguarded.tools.map((tool) => `/policy ask ${tool}`).join(' and ')} (or /policy disable)`,
  );
}

/** The machine tools without an `ask` or `disable` policy in the global scope (the scope of every DM). */
async function unguardedTools(config: Config): Promise<Unguarded> {
  const tools = machineTools(config);
  let store: Store;
  try {
    store = await Store.open({ url: config.storeUrl, dataDir: config.dataDir, connectTimeoutMs: config.storeConnectTimeoutMs });
  } catch (error) {
    return { tools, unread: messageOf(error) };
  }
  try {
    const policy = createPolicyStore({ store, catalog: { get: () => undefined, names: () => [] }, audit: { record: async () => {}, recent: async () => [] } });
    const modes: PolicyMode[] = await Promise.all(tools.map((tool) => policy.effective(tool, GLOBAL_SCOPE)));
    return { tools: tools.filter((_, index) => modes[index] === 'allow') };
  } catch (error) {
    return { tools, unread: messageOf(error) };
  } finally {
    await store.close().catch(() => undefined);
  }
}
