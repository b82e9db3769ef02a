#!/usr/bin/env node
/**
 * The `pincer` program: `start` (the default) runs the bot, `doctor` checks
 * the setup, `init` writes one. A `.env` file in the working folder is read
 * first; variables already set in the environment win over it.
 */
import { loadDotEnv } from './cli/dotenv.js';

const dotEnv = loadDotEnv(process.cwd());
if (dotEnv.error) process.stderr.write(`pincer: ${dotEnv.error}\n`);

const start = async () => {
  const { startBot } = await import('./cli/start.js');
  startBot();
};

const args = process.argv.slice(2);
// The plain start, the common case, goes straight to the bot; everything else is the command line's.
if (args.length === 0 || (args.length === 1 && args[0] === 'start')) await start();
else await (await import('./cli/program.js')).runCommandLine(process.argv, start);
