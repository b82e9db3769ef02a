/**
 * The Telegram channel's public surface: the adapter and its tuning options.
 * Everything else in this folder is internal to the adapter.
 */
export { TelegramChannel } from './adapter.js';
export { DefaultTelegramChannelOptions, type TelegramChannelOptions } from './options.js';
