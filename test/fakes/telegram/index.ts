/**
 * The fake Telegram Bot API: start it, point grammY's `apiRoot` at it, inject
 * user actions and read what the bot did.
 */
export { FakeTelegram, startFakeTelegram } from './server.js';
export type {
  BotMessageState,
  ButtonPressInput,
  CallbackAnswerRecord,
  CallRecord,
  ChatActionRecord,
  CommandsRecord,
  FakeTelegramOptions,
  InjectedFailure,
  SentRecord,
  SentUserMessage,
  UploadRecord,
  UserMessageInput,
} from './server.js';
export { parseTelegramHtml } from './html.js';
export { waitFor } from './wait.js';
