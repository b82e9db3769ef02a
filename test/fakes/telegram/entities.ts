/**
 * The entities Telegram clients attach to what a user types: a bot_command for
 * a leading `/cmd` or `/cmd@bot`, and a mention for each `@username`. grammY
 * and the adapter read commands from these entities, not from the text.
 */
import type { MessageEntity } from 'grammy/types';

const COMMAND = /^\/[A-Za-z0-9_]{1,32}(@[A-Za-z0-9_]{3,32})?/;
const MENTION = /(^|[^A-Za-z0-9_@])(@[A-Za-z0-9_]{5,32})/g;

/** Entities for `text` as a Telegram client would compute them (offsets in UTF-16 units). */
export function entitiesFor(text: string): MessageEntity[] {
  const entities: MessageEntity[] = [];
  const command = COMMAND.exec(text);
  if (command) entities.push({ type: 'bot_command', offset: 0, length: command[0].length });
  for (const match of text.matchAll(MENTION)) {
    const offset = match.index + match[1]!.length;
    if (command && offset < command[0].length) continue;
    entities.push({ type: 'mention', offset, length: match[2]!.length });
  }
  return entities;
}
