import { afterEach, describe, expect, it } from 'vitest';
import type { ChatInfo } from '../../src/channels/types.js';
import { textReply } from '../fakes/llm/server.js';
import { scenarioTools, ToolLog } from '../scenarios/tools.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm, testGroup, type TestPlatform } from '../support/test-channel.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

async function start(): Promise<TestPlatform> {
  rig = await startAppRig({ responder: () => textReply('ok'), tools: scenarioTools(new ToolLog()) });
  return rig.platform;
}

const owner = { id: 'owner', name: 'Olga' };
const member = { id: 'mia', name: 'Mia' };
const groupAdmin = { id: 'gina', name: 'Gina' };

/** Runs one command as a slash-command interaction and gives what the sender was told privately. */
async function told(platform: TestPlatform, sender: { id: string; name: string }, chat: ChatInfo, args: string): Promise<string> {
  platform.channel.command({ chat, sender, name: 'policy', args, interaction: true });
  await rig!.app.runtime.idle();
  return platform.noticesFor(sender.id).at(-1)?.text ?? '';
}

describe('who may run a command', () => {
  it('refuses a member before looking at the arguments, naming the scope asked for', async () => {
    const platform = await start();
    const group = testGroup('g1');
    expect(await told(platform, member, group, 'frobnicate')).toBe('Only an admin of this group can change its tool policy. Nothing was changed.');
    expect(await told(platform, member, group, 'list global')).toMatch(/^Only an owner or a configured admin of this bot can change or list the global tool policy/);
    expect(await told(platform, member, testDm(member.id), 'list')).toMatch(/global tool policy/);
  });

  it('lets a group admin change the group but not the global policy', async () => {
    const platform = await start();
    platform.admins.add(groupAdmin.id);
    const group = testGroup('g2');
    platform.channel.command({ chat: group, sender: groupAdmin, name: 'policy', args: 'disable calculator' });
    await rig!.app.runtime.idle();
    expect(platform.messagesIn(group).at(-1)?.text).toBe('Policy for calculator set to "disable" in this group; here it is now: disabled.');
    expect(await told(platform, groupAdmin, group, 'allow calculator global')).toMatch(/global tool policy/);
  });

  it('shows an admin the usage for a wrong argument, and changes nothing', async () => {
    const platform = await start();
    const dm = testDm(owner.id);
    expect(await told(platform, owner, dm, 'allow')).toBe('TOOL is missing. Usage: /policy list [here|global] | allow|ask|disable|reset TOOL [here|global]');
    expect(await told(platform, owner, dm, 'disable calculator globl')).toMatch(/^SCOPE must be one of here, global\. Usage: \/policy/);
    expect(await told(platform, owner, dm, 'disable calculator global now')).toMatch(/^"now" is not expected there\. Usage: \/policy/);
    platform.channel.command({ chat: dm, sender: owner, name: 'policy', args: 'list' });
    await rig!.app.runtime.idle();
    const list = platform.messagesIn(dm).at(-1)?.text;
    expect(list).toMatch(/calculator: /);
    expect(list).not.toMatch(/calculator: disable/);
  });
});
