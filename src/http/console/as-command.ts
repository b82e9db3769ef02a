/**
 * The console's changes go through the chat commands themselves: cancelling a
 * job is `/jobs cancel ID`, pausing a routine `/routines pause ID`, a policy
 * change `/policy allow TOOL`, run as the signed-in person from a chat where
 * the command means the same (their DM, or the group whose scope it is). The
 * command handler checks who may do it and makes the change as it does in
 * chat, so the rules live in one place; the console shows its answer.
 */
import type { ChatInfo, InboundCommand } from '../../channels/types.js';
import type { Viewer } from './viewer.js';

/** Runs a command event through the application's command handler. */
export type CommandRunner = (event: InboundCommand) => Promise<void>;

/** The platform id of a qualified user id (`telegram:42` -> `42`). */
export function platformIdOf(userId: string): { channel: string; id: string } {
  const at = userId.indexOf(':');
  return { channel: userId.slice(0, at), id: userId.slice(at + 1) };
}

/** The signed-in person's DM with the bot, as a command's chat (commands there act globally). */
export function dmOf(viewer: Viewer): ChatInfo {
  const { channel, id } = platformIdOf(viewer.userId);
  return { channel, chatId: id, kind: 'dm', scope: 'global' };
}

/** Runs `/name args` as `viewer` in `chat` and returns what the command answered. */
export async function runAs(run: CommandRunner, viewer: Viewer, chat: ChatInfo, name: string, args: string): Promise<{ text: string }> {
  const { id } = platformIdOf(viewer.userId);
  let answer = '';
  const event: InboundCommand = {
    type: 'command',
    chat,
    sender: { id, name: `${viewer.name} (console)` },
    receivedAt: Date.now(),
    name,
    args,
    respond: async (reply) => {
      answer = reply.text;
    },
  };
  await run(event);
  return { text: answer };
}
