/**
 * Whose workspace a tool call uses, and where it lives. In a DM the call uses
 * the person's own workspace, `users/<platform>/<userId>/`; in a group, the
 * conversation's, `chats/<channel>/<chatId>/` (a chat's topics and Slack
 * threads share it). A background job uses the workspace of the conversation
 * it was created in when its context names it, else its owner's own. Files,
 * the shell's working folder and memory notes all follow this one rule.
 */
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ToolContext } from '../../types.js';

/** The folder of people's own workspaces, under the workspaces' root. */
export const USERS_FOLDER = 'users';
/** The folder of group conversations' workspaces, under the workspaces' root. */
export const CHATS_FOLDER = 'chats';
/** The name under which every workspace shows the folders the owner shares. */
export const SHARED_FOLDER = 'shared';

/** Whose workspace it is: one person's, or one group conversation's. */
export type WorkspaceOwner = { kind: 'person'; userId: string } | { kind: 'chat'; channel: string; chatId: string };

/** What of a tool context decides the workspace. */
export type WorkspaceCaller = Pick<ToolContext, 'userId' | 'threadKey' | 'channel' | 'approval' | 'conversation'>;

/** A folder shared with every workspace as `shared/<name>` (config `tools.files.shared`). */
export interface SharedFolder {
  name: string;
  path: string;
  writable: boolean;
}

/** Where the workspaces are, and what is shared between them. */
export interface WorkspaceSettings {
  /** The folder holding `users/` and `chats/`. */
  root: string;
  shared: readonly SharedFolder[];
  /**
   * Folders no shared folder may show, however wide it is: the data folder and
   * the workspaces' own trees (sharing the workspaces' root shares neither).
   */
  hidden: readonly string[];
}

/**
 * The workspace of a call.
 * @example workspaceOwnerOf({ userId: 'telegram:42', approval: { kind: 'chat', chatKind: 'dm' }, ... }) // { kind: 'person', userId: 'telegram:42' }
 */
export function workspaceOwnerOf(ctx: WorkspaceCaller): WorkspaceOwner {
  const chat = ctx.conversation ?? chatOfCall(ctx);
  if (chat?.kind === 'group') return { kind: 'chat', channel: chat.channel, chatId: chat.chatId };
  return { kind: 'person', userId: ctx.userId };
}

/** The folder of `owner`'s workspace under `root` (not created). */
export function workspaceFolder(root: string, owner: WorkspaceOwner): string {
  if (owner.kind === 'chat') return join(root, CHATS_FOLDER, folderName(owner.channel), folderName(owner.chatId));
  const at = owner.userId.indexOf(':');
  const [platform, id] = at < 0 ? ['', owner.userId] : [owner.userId.slice(0, at), owner.userId.slice(at + 1)];
  return join(root, USERS_FOLDER, folderName(platform), folderName(id));
}

const PLAIN_NAME = /^[a-z0-9-]{1,64}$/;

/**
 * A platform id as a folder name: ids of lowercase letters, digits and `-`
 * stay as they are; any other is lowercased with other characters turned into
 * `_`, then `~` and a hash of the exact id. Two ids never share a folder (also
 * on a file system that ignores case), and no name is `.`, `..` or holds a `/`.
 * @example folderName('42') // '42'
 * @example folderName('U01ABC') // 'u01abc~' + 12 hex digits
 */
export function folderName(id: string): string {
  if (PLAIN_NAME.test(id)) return id;
  const readable = id
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '_')
    .slice(0, 40);
  return `${readable}~${createHash('sha256').update(id, 'utf8').digest('hex').slice(0, 12)}`;
}

/**
 * What lies at the top of the workspaces' root besides `users/` and `chats/`:
 * files of the one shared workspace older versions kept there, which no call
 * reaches any more. Empty when the folder does not exist.
 */
export async function leftoverEntries(root: string): Promise<string[]> {
  const names = await readdir(root).catch(() => [] as string[]);
  return names.filter((name) => name !== USERS_FOLDER && name !== CHATS_FOLDER).sort();
}

/** A chat call's conversation, from its thread key (`channel:chat[:sub]`) and chat kind. */
function chatOfCall(ctx: WorkspaceCaller): { channel: string; chatId: string; kind: 'dm' | 'group' } | undefined {
  if (ctx.approval.kind !== 'chat') return undefined;
  const prefix = `${ctx.channel}:`;
  const rest = ctx.threadKey.startsWith(prefix) ? ctx.threadKey.slice(prefix.length) : ctx.threadKey;
  return { channel: ctx.channel, chatId: rest.split(':')[0] ?? rest, kind: ctx.approval.chatKind };
}
