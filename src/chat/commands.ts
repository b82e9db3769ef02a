/**
 * Chat commands (SPEC section 7). They run on the control path: a command never
 * waits behind a running turn. Who may run each one is checked by the authority
 * before it runs, from the table's `who`.
 */
import { commandUsage, findCommand, parseCommand, type ParsedCommand, type ParseResult } from '../channels/command-grammar.js';
import type { Channel, CommandSpec, InboundCommand } from '../channels/types.js';
import { qualifiedUserId, threadKeyOf } from '../channels/types.js';
import { decideApproval } from '../tools/approval-rule.js';
import { seededPermission } from '../tools/permissions.js';
import { GLOBAL_SCOPE } from '../tools/policy.js';
import { staticRequirement } from '../tools/requirement.js';
import type { Permission, PolicyMode } from '../tools/types.js';
import { Authority } from './authority.js';
import { zeroUsage } from '../engine/history.js';
import type { CommandCaller, CommandReply, FeatureCommand } from '../engine/feature.js';
import type { AgentServices } from '../engine/services.js';
import type { StopResult } from './thread-runner.js';
import { withinRate, type SenderRate } from '../engine/inbound-limits.js';
import { formatUsage } from '../engine/usage.js';


/** What commands need from the runtime besides the services. */
export interface CommandHost {
  services: AgentServices;
  /** Each sender's rate: every command but /stop counts, and over it is dropped with one notice a window. */
  senderRate: SenderRate;
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
  /** Every command, the features' included, in the order help lists them. */
  commands: readonly CommandSpec[];
  /** The features' commands' handlers, by command name. */
  featureCommands: ReadonlyMap<string, FeatureCommand>;
}

/** What someone who may not touch the global tool policy is told. */
const GLOBAL_POLICY_REFUSAL = 'Only an owner or a configured admin of this bot can change or list the global tool policy. Nothing was changed.';

/** What someone who may not run `spec` is told; `/policy`'s refusal names the scope asked for. */
function refusal(spec: CommandSpec, event: InboundCommand, parsed: ParseResult): string {
  if (spec.name === 'shutdown') return 'Only an owner of this bot can shut it down.';
  if (spec.name === 'policy') {
    const global = event.chat.kind === 'dm' || (parsed.ok && parsed.value.args.scope === 'global');
    return global ? GLOBAL_POLICY_REFUSAL : 'Only an admin of this group can change its tool policy. Nothing was changed.';
  }
  return spec.who === 'owner' ? `Only an owner of this bot can use /${spec.name}.` : `Only an admin can use /${spec.name}${event.chat.kind === 'group' ? ' in this group' : ''}.`;
}

/** Runs commands. */
export class CommandHandler {
  private readonly authority: Authority;

  constructor(private readonly host: CommandHost) {
    this.authority = new Authority(host.services.config, (name) => host.channel(name), host.services.log);
  }

  private get services(): AgentServices {
    return this.host.services;
  }

  /**
   * Handles one command event. Never throws: failures become a reply. Every
   * command but /stop counts against its sender's rate (its reply is a reply
   * like any other); /stop always acts at once, whatever the rate.
   */
  async handle(event: InboundCommand): Promise<void> {
    const spec = findCommand(this.host.commands, event.name);
    const name = spec?.name;
    try {
      const run = async () => {
        const result = spec ? await this.checkedRun(spec, event) : `Unknown command /${event.name}.\n\n${this.help(event)}`;
        const reply = typeof result === 'string' ? { text: result, private: false } : result;
        await this.reply(event, reply.text, reply.private);
      };
      if (name === 'stop') await run();
      else await withinRate(this.host.senderRate, qualifiedUserId(event.chat.channel, event.sender.id), run, (text) => this.reply(event, text, true));
    } catch (error) {
      this.services.log.error({ err: error, command: name }, 'command failed');
      await this.reply(event, 'Sorry, that command failed. Please try again.', true);
    }
  }

  /** Checks who may run it (the spec's `who`), then parses the arguments and runs it. */
  private async checkedRun(spec: CommandSpec, event: InboundCommand): Promise<string | { text: string; private: boolean }> {
    const parsed = parseCommand(spec, event.args);
    if (!(await this.authority.allows(spec.who ?? 'everyone', event.chat, event.sender.id))) {
      return { text: refusal(spec, event, parsed), private: true };
    }
    if (!parsed.ok) return { text: parsed.error, private: true };
    return this.run(spec.name, event, parsed.value);
  }

  private async run(name: string, event: InboundCommand, parsed: ParsedCommand): Promise<CommandReply> {
    const feature = this.host.featureCommands.get(name);
    if (feature) return feature.run(event, parsed, this.callerOf(event));
    const key = threadKeyOf(event.chat);
    switch (name) {
      case 'stop': {
        const { hadWork, kept } = await this.host.stopThread(key, event.sender.name);
        if (kept && event.chat.kind === 'group') {
          // Another person's message is never read as a request of the next turn: it stays as context only.
          const context = this.services.config.agent.groupContextMessages > 0 ? `; I keep ${kept === 1 ? 'it' : 'them'} as context for the next time I am addressed` : '';
          return `⏹️ Stopped. ${kept === 1 ? 'The message' : `The ${kept} messages`} sent meanwhile ${kept === 1 ? 'was' : 'were'} not answered${context}.`;
        }
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
        return this.policy(event, parsed);
      case 'permissions':
        return this.permissions(event, parsed);
      case 'model':
        return this.model(event, parsed, key);
      case 'shutdown':
        this.host.shutdown(`/shutdown by ${event.sender.name}`);
        return 'Shutting down.';
      default:
        return this.help(event);
    }
  }

  /** The sender as a feature's command sees them. */
  private callerOf(event: InboundCommand): CommandCaller {
    return {
      userId: qualifiedUserId(event.chat.channel, event.sender.id),
      owner: this.authority.isOwner(event.chat.channel, event.sender.id),
      groupAdmin: () => this.authority.isChatAdmin(event.chat, event.sender.id),
    };
  }

  private help(event: InboundCommand): string {
    const lines = this.host.commands.map((command) => `${commandUsage(command)}: ${command.description}`);
    lines.push(...(this.host.channel(event.chat.channel)?.ownCommands ?? []));
    return `Commands:\n${lines.join('\n')}`;
  }

  private async newThread(event: InboundCommand, key: string) {
    if (event.chat.kind === 'group' && !(await this.authority.isChatAdmin(event.chat, event.sender.id))) {
      return { text: 'Only an admin of this group can start a fresh conversation here.', private: true };
    }
    await this.host.stopThread(key, event.sender.name);
    // The stopped turn saves its history as it ends; clear after that, not before.
    await this.host.threadIdle(key);
    await this.services.history.update(key, event.chat, (record) => {
      record.messages = [];
      record.groupContext = [];
      record.lastIteration = 0;
      // The thread's counters start again too; what was spent still counts in /usage for the day.
      record.turns = 0;
      record.usage = zeroUsage();
    });
    return '🆕 Fresh start: I have forgotten this conversation, and its counters start from zero.';
  }

  private async tools(event: InboundCommand): Promise<string> {
    const { registry, policy, permissions } = this.services;
    const userId = qualifiedUserId(event.chat.channel, event.sender.id);
    const lines: string[] = [];
    for (const tool of registry.list()) {
      const [mode, permission] = await Promise.all([policy.effective(tool.name, event.chat.scope), permissions.get(userId, tool.name)]);
      lines.push(`• ${tool.name}: ${this.howToolRuns(tool.name, mode, event.chat.kind, permission)}`);
    }
    return lines.length ? `Tools here:\n${lines.join('\n')}` : 'No tools are available here.';
  }

  /** How a call of `tool` goes in a chat of `chatKind`, in the words of `/tools`: free, runs without asking (the user's Always allow), asks first, DM only, disabled. */
  private howToolRuns(tool: string, mode: PolicyMode, chatKind: 'dm' | 'group', permission?: Permission): string {
    const registered = this.services.registry.get(tool);
    if (!registered) return mode === 'disable' ? 'disabled' : 'not installed';
    const seeded = seededPermission(registered.tool);
    const input = { tool, requirement: staticRequirement(registered.tool), policy: mode, permission: permission ?? seeded, context: { kind: 'chat' as const, chatKind } };
    const decision = decideApproval(input);
    if (decision.kind === 'run') {
      const chosen = input.permission !== seeded && decideApproval({ ...input, permission: seeded }).kind !== 'run';
      return chosen ? `runs without asking: you chose Always allow (/permissions reset ${tool} to be asked again)` : 'free';
    }
    if (decision.kind === 'ask') return 'asks first';
    return mode === 'disable' || permission === 'disabled' ? 'disabled' : 'DM only (needs approval)';
  }

  private async usage(event: InboundCommand): Promise<string> {
    const userId = qualifiedUserId(event.chat.channel, event.sender.id);
    const own = await this.services.usage.userToday(userId);
    const priceUnknown = this.services.models.list().some((choice) => !choice.price);
    const lines = [`Your usage today: ${formatUsage(own, { priceUnknown })}.`];
    const jobs = await this.services.usage.userJobsToday(userId);
    if (jobs.calls) lines.push(`Of which your background jobs: ${formatUsage(jobs, { priceUnknown })}.`);
    const heard = await this.services.attachments.voice?.secondsToday(userId);
    if (heard) lines.push(`Audio transcribed today: ${minutesText(heard)}.`);
    const limit = this.services.config.agent.dailyCostLimitUsd;
    if (limit > 0) lines.push(`Daily limit: $${limit.toFixed(2)}.`);
    if (await this.authority.isChatAdmin(event.chat, event.sender.id)) lines.push(`Everyone today: ${formatUsage(await this.services.usage.totalToday(), { priceUnknown })}.`);
    if (priceUnknown) lines.push('Set a price under llm.prices or llm.models to count the cost of every model.');
    return lines.join('\n');
  }

  private async policy(event: InboundCommand, parsed: ParsedCommand) {
    const action = parsed.sub ?? 'list';
    const scope = parsed.args.scope === 'global' || event.chat.kind === 'dm' ? GLOBAL_SCOPE : event.chat.scope;
    // Admins of a group may change its policy; the global one needs an admin of the bot.
    if (scope === GLOBAL_SCOPE && !this.authority.isBotAdmin(event.chat.channel, event.sender.id)) return { text: GLOBAL_POLICY_REFUSAL, private: true };
    if (action === 'list') return this.policyList(scope, event.chat.kind);
    const tool = String(parsed.args.tool);
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
    const how = this.howToolRuns(tool, effective, event.chat.kind);
    return action === 'reset'
      ? `Policy for ${tool} reset ${where}; here it is now: ${how}.`
      : `Policy for ${tool} set to "${action}" ${where}; here it is now: ${how}.`;
  }

  /** Lists the models, or switches this conversation's (persisted in its record; the next turn uses it). */
  private async model(event: InboundCommand, parsed: ParsedCommand, key: string): Promise<string | { text: string; private: boolean }> {
    const { models, history } = this.services;
    const current = models.nameFor((await history.get(key))?.model);
    if (parsed.sub !== 'use') {
      const lines = models.list().map((choice) => {
        const where = choice.baseUrl ? new URL(choice.baseUrl).host : 'api.openai.com';
        const key = choice.apiKeyEnv ? `, key from ${choice.apiKeyEnv}` : '';
        const price = choice.price ? `$${choice.price.input} in / $${choice.price.output} out per million tokens` : 'price unknown';
        const marks = [choice.name === current ? 'in use here' : '', choice.isDefault ? 'default' : ''].filter(Boolean).join(', ');
        return `• ${choice.name}${marks ? ` (${marks})` : ''}: ${where}${key}; ${price}${choice.vision ? '; sees images' : ''}`;
      });
      const hint = models.list().length > 1 ? '\nSwitch with /model use NAME.' : '\nMore models can be listed under llm.models in the config.';
      return `Models:\n${lines.join('\n')}${hint}`;
    }
    if (event.chat.kind === 'group' && !(await this.authority.isChatAdmin(event.chat, event.sender.id))) {
      return { text: 'Only an admin of this group can switch its model.', private: true };
    }
    const wanted = String(parsed.args.name);
    const choice = models.find(wanted);
    if (!choice) return { text: `There is no model named "${wanted}". Models: ${models.list().map((c) => c.name).join(', ')}.`, private: true };
    await history.update(key, event.chat, (record) => {
      if (choice.isDefault) delete record.model;
      else record.model = choice.name;
    });
    return choice.name === current ? `This conversation already uses ${choice.name}.` : `This conversation now uses ${choice.name} (was ${current}).`;
  }

  /** A user's own choices: listed, or reset for one tool or all. Private: they are nobody else's business. */
  private async permissions(event: InboundCommand, parsed: ParsedCommand): Promise<{ text: string; private: boolean }> {
    const { permissions, registry } = this.services;
    const userId = qualifiedUserId(event.chat.channel, event.sender.id);
    const chosen = (await permissions.list(userId)).filter((entry) => entry.source === 'user' && entry.permission !== 'askEachTime');
    if (parsed.sub === 'reset') {
      const tool = String(parsed.args.tool);
      const targets = tool.toLowerCase() === 'all' ? chosen.map((entry) => entry.tool) : [tool];
      if (tool.toLowerCase() !== 'all' && !registry.get(tool) && !chosen.some((entry) => entry.tool === tool)) {
        return { text: `There is no tool named "${tool}". Tools: ${registry.names().join(', ')}.`, private: true };
      }
      for (const target of targets) await permissions.reset(userId, target);
      if (!targets.length) return { text: 'You have no tool choices to reset.', private: true };
      return { text: `Reset: ${targets.join(', ')}. ${plural(targets.length, 'It asks', 'They ask')} first again where approval is needed.`, private: true };
    }
    if (!chosen.length) return { text: 'You have not set any tool to Always allow. Press "Always allow" on a prompt to set one.', private: true };
    const lines = chosen.map((entry) => `• ${entry.tool}: ${entry.permission === 'alwaysAllow' ? 'always allowed' : 'disabled by you'}`);
    return { text: `Your tool choices:\n${lines.join('\n')}\nUse /permissions reset TOOL (or all) to undo.`, private: true };
  }

  /** Each tool's effective mode in `/tools` words, and where it was set (this group, global, or the tool's default). */
  private async policyList(scope: string, chatKind: 'dm' | 'group'): Promise<string> {
    const entries = await this.services.policy.list(scope);
    const source = { scope: 'set for this group', global: 'set globally', default: 'default' } as const;
    const lines = entries.map((entry) => `• ${entry.tool}: ${this.howToolRuns(entry.tool, entry.mode, chatKind)} (${source[entry.source]})`);
    return `Tool policy ${scope === GLOBAL_SCOPE ? '(global)' : 'for this group'}, as it applies in ${chatKind === 'dm' ? 'a DM' : 'this group'}:\n${lines.join('\n')}`;
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

/** `one` for a count of 1, `many` otherwise. */
function plural(count: number, one: string, many: string): string {
  return count === 1 ? one : many;
}

/** Seconds of audio in minutes, for people: `2.5 minutes`, `12 minutes`, `less than a minute`. */
function minutesText(seconds: number): string {
  const minutes = seconds / 60;
  if (minutes < 0.1) return 'less than a tenth of a minute';
  const shown = minutes >= 10 ? Math.round(minutes) : Math.round(minutes * 10) / 10;
  return `${shown} ${plural(shown, 'minute', 'minutes')}`;
}
