/**
 * `pincer init`: an interactive setup that writes `.env` and the config file.
 */

/** Runs the setup; resolves to the exit code. */
export async function runInit(_options: Record<string, unknown>): Promise<number> {
  process.stderr.write('pincer init: not built yet\n');
  return 2;
}
