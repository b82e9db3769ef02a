/**
 * What the terminal adapter takes: the two streams, who sits at the keyboard,
 * and how the output looks. Everything but the streams and the user's name
 * has a default.
 */

/** Streams, user and looks of the terminal channel. */
export interface TerminalChannelOptions {
  /** Usually `process.stdin`. */
  input: NodeJS.ReadableStream;
  /** Usually `process.stdout`. */
  output: NodeJS.WritableStream;
  /** Display name of the person at the keyboard (config `terminal.userName`). */
  userName: string;
  /** User id in thread keys and owner lists (`terminal:<id>`). */
  userId?: string;
  /** ANSI colours; default: when the output is a TTY and `NO_COLOR` is unset. */
  color?: boolean;
  /** Name printed in front of the bot's messages. */
  botName?: string;
  /**
   * Called when the person ends the session at the keyboard (Ctrl+D, the end
   * of the input, a second Ctrl+C), not when the channel is stopped: the
   * program decides what quitting means (`pincer start` shuts down).
   */
  onQuit?: () => void;
}

/** The defaults of the optional {@link TerminalChannelOptions}. */
export const DefaultTerminalChannelOptions = {
  userId: 'owner',
  botName: 'pincer',
  onQuit: () => undefined,
} as const satisfies Partial<TerminalChannelOptions>;

/** Options with every default filled in, and whether the output is a terminal. */
export interface ResolvedTerminalOptions extends Required<TerminalChannelOptions> {
  /** The output is a TTY: prompt, status line and cursor movement are used. */
  tty: boolean;
}

/** Merges `options` over the defaults. */
export function resolveTerminalOptions(options: TerminalChannelOptions, env: NodeJS.ProcessEnv = process.env): ResolvedTerminalOptions {
  const tty = Boolean((options.output as { isTTY?: boolean }).isTTY);
  return {
    ...options,
    userId: options.userId ?? DefaultTerminalChannelOptions.userId,
    botName: options.botName ?? DefaultTerminalChannelOptions.botName,
    onQuit: options.onQuit ?? DefaultTerminalChannelOptions.onQuit,
    color: options.color ?? (tty && !env.NO_COLOR),
    tty,
  };
}
