/**
 * Playing a Telegram user against the fake Bot API while the built product
 * long-polls it: write in the DM, press the buttons the bot shows, read the
 * chat as it currently looks.
 */
import type { Chat, InlineKeyboardButton, User } from 'grammy/types';
import type { BotMessageState, FakeTelegram } from '../fakes/telegram/index.js';
import { waitUntil } from './pincer.js';

/** The user who owns the bot (PINCER_OWNERS=telegram:<id>); their DM has the same id. */
export const OWNER: User = { id: 2_000_001, is_bot: false, first_name: 'Ada' };
export const DM: Chat = { id: OWNER.id, type: 'private', first_name: 'Ada' } as Chat;

/** The user writes `text` in the DM; returns the update id. */
export function say(fake: FakeTelegram, text: string): number {
  return fake.sendUserMessage({ chat: DM, from: OWNER, text }).updateId;
}

/** The bot's messages in the DM, as they read now. */
export function dmMessages(fake: FakeTelegram): BotMessageState[] {
  return fake.chatMessages(DM.id);
}

/** Waits until a bot message in the DM reads `text` (or contains it), and returns it. */
export function waitForDm(fake: FakeTelegram, text: string, describe: () => string, timeoutMs = 15_000): Promise<BotMessageState> {
  return waitUntil(
    () => dmMessages(fake).find((message) => message.plainText.includes(text)),
    timeoutMs,
    () => `the bot to write ${JSON.stringify(text)} in the DM; it shows ${JSON.stringify(dmMessages(fake).map((m) => m.plainText))}\n${describe()}`,
  );
}

/** The callback buttons a message currently shows. */
export function buttonsOf(message: BotMessageState): InlineKeyboardButton.CallbackButton[] {
  return (message.replyMarkup?.inline_keyboard.flat() ?? []).filter(
    (button): button is InlineKeyboardButton.CallbackButton => 'callback_data' in button,
  );
}

/** The user presses the button labelled `label` on `message`. */
export function press(fake: FakeTelegram, message: BotMessageState, label: string): void {
  const button = buttonsOf(message).find((candidate) => candidate.text === label);
  if (!button) throw new Error(`no ${label} button on ${JSON.stringify(message.plainText)}: ${JSON.stringify(buttonsOf(message))}`);
  fake.pressButton({ chat: DM, from: OWNER, messageId: message.messageId, data: button.callback_data });
}
