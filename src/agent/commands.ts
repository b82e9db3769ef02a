/**
 * Chat commands (SPEC section 7). They run on the control path: a command never
 * waits behind a running turn. Admin commands check the caller before anything
 * changes.
 */
import type { Channel, CommandSpec, InboundCommand } from '../channels/types.js';
import { qualifiedUserId, threadKeyOf } from '../channels/types.js';
import { decideApproval } from '../tools/approval-rule.js';
import { GLOBAL_SCOPE } from '../tools/policy.js';
import { staticRequirement } from '../tools/requirement.js';
import type { PolicyMode } from '../tools/types.js';
import type { AgentServices } from './services.js';
import type { StopResult } from './thread-runner.js';
import { formatUsage } from './usage.js';

/** Every command pincer knows, for help and for platform registration. */
export const COMMANDS: CommandSpec[] = [
  { name: 'stop', description: 'Stop the running turn' },
  { name: 'new', description: 'Start a fresh conversation in this chat' },
  { name: 'status', description: 'What the bot is doing here, and this thread\'s usage' },
  { name: 'tools', description: 'Tools available here and whether they ask first' },
  { name: 'usage', description: 'Tokens and cost today' },
  { name: 'policy', description: 'Admin tool policy', usage: 'list | allow|ask|disable|reset TOOL [here|global]', adminOnly: true },
  { name: 'help', description: 'List the commands' },
  { name: 'shutdown', description: 'Shut the bot down (owners)', adminOnly: true },
];

/** Other names accepted for commands. */
const ALIASES: Record<string, string> = { interrupt: 'stop', reset: 'new', start: 'help' };

/** What commands need from the runtime besides the services. */
export interface CommandHost {
  services: AgentServices;
  channel(name: string): Channel | undefined;
  /**
   * Stops the thread's running turn and cancels its pending approval. Says
   * whether anything was running, and how many unread messages were kept.
   */
  stopThread(key: string, byName: string): Promise<StopResult>;
  /** Resolves once the thread's runner has no turn running or waiting. */
  threadIdle(key: string): Promise<void>;
  /** A human-readable state of the thread. */
  describeThread(key: string): Promise<string>;
  shutdown(reason: string): void;
}

/** The canonical name of a command, or undefined when unknown. */
export function canonicalCommand(name: string): string | undefined {
  const lower = name.toLowerCase();
  const canonical = ALIASES[lower] ?? lower;
  return COMMANDS.some((command) => command.name === canonical) ? canonical : undefined;
}

/** Runs commands. */
export class CommandHandler {
  constructor(private readonly host: CommandHost) {}

  private get services(): AgentServices {
    return this.host.services;
  }

  /** Handles one command event. Never throws: failures become a reply. */
  async handle(event: InboundCommand): Promise<void> {
    const name = canonicalCommand(event.name);
    try {
      const result = name ? await this.run(name, event) : `Unknown command /${event.name}.\n\n${this.help()}`;
      const reply = typeof result === 'string' ? { text: result, private: false } : result;
      await this.reply(event, reply.text, reply.private);
    } catch (error) {
      this.services.log.error({ err: error, command: name }, 'command failed');
      await this.reply(event, 'Sorry, that command failed. Please try again.', true);
    }
  }

  /** Whether the sender is an owner (from configuration). */
  isOwner(channel: string, userId: string): boolean {
    // Whoever sits at the local terminal runs the process, so owns it.
    if (channel === 'terminal') return true;
    return this.services.config.owners.includes(qualifiedUserId(channel, userId));
  }

  /** Whether the sender may administer this chat: owners, configured admins, or platform admins. */
  async isAdmin(event: InboundCommand): Promise<boolean> {
    const id = qualifiedUserId(event.chat.channel, event.sender.id);
    if (this.isOwner(event.chat.channel, event.sender.id) || this.services.config.admins.includes(id)) return true;
    const channel = this.host.channel(event.chat.channel);
    if (!channel?.isAdmin || event.chat.kind !== 'group') return false;
    try {
      return await channel.isAdmin(event.chat, event.sender.id);
    } catch (error) {
      this.services.log.warn({ err: error }, 'admin check failed');
      return false;
    }
  }

  private async run(name: string, event: InboundCommand): Promise<string | { text: string; private: boolean }> {
    const key = threadKeyOf(event.chat);
    switch (name) {
      case 'stop': {
        const { hadWork, kept } = await this.host.stopThread(key, event.sender.name);
        if (kept) return `⏹️ Stopped. I kept your ${kept === 1 ? 'message' : `${kept} messages`} sent meanwhile in the conversation; I will read ${kept === 1 ? 'it' : 'them'} with your next message.`;
        return hadWork ? '⏹️ Stopped.' : 'Nothing is running here.';
      }
      case 'new':
        return this.newThread(event, key);
      case 'status':
        return this.host.describeThread(key);
      case 'tools':
        return this.tools(event);
      case 'usage':
        return this.usage(event);
      case 'policy':
        return this.policy(event);
      case 'shutdown':
        if (!this.isOwner(event.chat.channel, event.sender.id)) return { text: 'Only an owner of this bot can shut it down.', private: true };
        this.host.shutdown(`/shutdown by ${event.sender.name}`);
        return 'Shutting down.';
      default:
        return this.help();
    }
  }

  private help(): string {
    const lines = COMMANDS.map((command) => `/${command.name}${command.usage ? ` ${command.usage}` : ''}: ${command.description}`);
    return `Commands:\n${lines.join('\n')}`;
  }

  private async newThread(event: InboundCommand, key: string) {
    if (event.chat.kind === 'group' && !(await this.isAdmin(event))) {
      return { text: 'Only an admin of this group can start a fresh conversation here.', private: true };
    }
    await this.host.stopThread(key, event.sender.name);
    // The stopped turn saves its history as it ends; clear after that, not before.
    await this.host.threadIdle(key);
    await this.services.history.update(key, event.chat, (record) => {
      record.messages = [];
      record.groupContext = [];
      record.lastIteration = 0;
    });
    return '🆕 Fresh start: I have forgotten this conversation.';
  }

  private async tools(event: InboundCommand): Promise<string> {
    const { registry, policy, permissions } = this.services;
    const userId = qualifiedUserId(event.chat.channel, event.sender.id);
    const context = { kind: 'chat' as const, chatKind: event.chat.kind };
    const lines: string[] = [];
    for (const tool of registry.list()) {
      const [mode, permission] = await Promise.all([policy.effective(tool.name, event.chat.scope), permissions.get(userId, tool.name)]);
      const decision = decideApproval({ tool: tool.name, requirement: staticRequirement(tool), policy: mode, permission, context });
      const how =
        decision.kind === 'run'
          ? 'free'
          : decision.kind === 'ask'
            ? 'asks first'
            : mode === 'disable' || permission === 'disabled'
              ? 'disabled'
              : 'DM only (needs approval)';
      lines.push(`• ${tool.name}: ${how}`);
    }
    return lines.length ? `Tools here:\n${lines.join('\n')}` : 'No tools are available here.';
  }

  private async usage(event: InboundCommand): Promise<string> {
    const userId = qualifiedUserId(event.chat.channel, event.sender.id);
    const own = await this.services.usage.userToday(userId);
    const lines = [`Your usage today: ${formatUsage(own)}.`];
    const limit = this.services.config.agent.dailyCostLimitUsd;
    if (limit > 0) lines.push(`Daily limit: $${limit.toFixed(2)}.`);
    if (await this.isAdmin(event)) lines.push(`Everyone today: ${formatUsage(await this.services.usage.totalToday())}.`);
    return lines.join('\n');
  }

  private async policy(event: InboundCommand) {
    const [verb = 'list', ...rest] = event.args.trim().split(/\s+/).filter(Boolean);
    const action = verb.toLowerCase();
    const wantsGlobal = rest.some((word) => word.toLowerCase() === 'global');
    const words = rest.filter((word) => !['global', 'here'].includes(word.toLowerCase()));
    const scope = wantsGlobal || event.chat.kind === 'dm' ? GLOBAL_SCOPE : event.chat.scope;
    const denied = await this.policyRefusal(event, scope);
    if (denied) return { text: denied, private: true };
    if (action === 'list') return this.policyList(scope);
    const tool = words[0];
    const usage = 'Usage: /policy list | allow|ask|disable|reset TOOL [here|global]';
    if (!['allow', 'ask', 'disable', 'reset'].includes(action) || !tool) return { text: usage, private: true };
    if (!this.services.registry.get(tool)) {
      return { text: `There is no tool named "${tool}". Tools: ${this.services.registry.names().join(', ')}.`, private: true };
    }
    const by = qualifiedUserId(event.chat.channel, event.sender.id);
    const result =
      action === 'reset'
        ? await this.services.policy.reset(tool, scope, by)
        : await this.services.policy.set(tool, scope, action as PolicyMode, by);
    if (!result.ok) return { text: result.message, private: true };
    const where = scope === GLOBAL_SCOPE ? 'everywhere (global)' : 'in this group';
    const effective = await this.services.policy.effective(tool, scope);
    return action === 'reset'
      ? `Policy for ${tool} reset ${where}; it is now "${effective}".`
      : `Policy for ${tool} set to "${action}" ${where}.`;
  }

  private async policyRefusal(event: InboundCommand, scope: string): Promise<string | undefined> {
    const id = qualifiedUserId(event.chat.channel, event.sender.id);
    if (scope === GLOBAL_SCOPE) {
      const allowed = this.isOwner(event.chat.channel, event.sender.id) || this.services.config.admins.includes(id);
      return allowed ? undefined : 'Only an owner or a configured admin of this bot can change or list the global tool policy. Nothing was changed.';
    }
    return (await this.isAdmin(event)) ? undefined : 'Only an admin of this group can change its tool policy. Nothing was changed.';
  }

  private async policyList(scope: string): Promise<string> {
    const entries = await this.services.policy.list(scope);
    const lines = entries.map((entry) => `• ${entry.tool}: ${entry.mode}${entry.source === 'default' ? '' : ` (${entry.source})`}`);
    return `Tool policy ${scope === GLOBAL_SCOPE ? '(global)' : 'for this group'}:\n${lines.join('\n')}`;
  }

  private async reply(event: InboundCommand, text: string, isPrivate: boolean): Promise<void> {
    if (event.respond) {
      try {
        await event.respond({ text: this.services.outbox.redact(text), private: isPrivate });
        return;
      } catch (error) {
        this.services.log.warn({ err: error }, 'command reply through the interaction failed; sending to the chat');
      }
    }
    await this.services.outbox.send(event.chat, text);
  }
}
