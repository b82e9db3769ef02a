/**
 * Longest text of one Telegram message, in UTF-16 code units as Telegram
 * counts. Its own module, so that what reads it at start does not load the
 * markdown renderer.
 */
export const TELEGRAM_MESSAGE_LIMIT = 4096;
