/**
 * The key by which `pincer console-link` proves it runs on the bot's machine:
 * a random key the console writes into the data folder (readable by its
 * owner only) at start, sent back over loopback.
 */

/** The key file's name in the data folder. */
export const CLI_KEY_FILE = 'console-cli.key';
