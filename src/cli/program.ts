/**
 * The command line of `pincer`: its commands, options and help, with
 * commander. Loaded for every use but the plain start, which needs none of it.
 */
import { Command, Option } from 'commander';
import type { InitOptions } from './init.js';
import { PINCER_VERSION } from '../version.js';

/** Parses `argv` and runs the command it names; `start` runs the bot. */
export async function runCommandLine(argv: string[], start: () => Promise<void>): Promise<void> {
  const program = new Command('pincer')
    .description('A self-hosted AI agent for Telegram, Discord, Slack and the terminal.')
    .usage('[start|doctor|init|console-link] [options]')
    .version(PINCER_VERSION, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show this help')
    .showHelpAfterError('(run pincer --help for the commands)')
    .addHelpText(
      'after',
      `
Configuration comes from the environment (a .env file in this folder is read too)
and from the file named by PINCER_CONFIG (default config/pincer.yaml).
Start with \`pincer init\`, check with \`pincer doctor\`, run with \`pincer\`.`,
    );

  program.argument('[command]').action(async (command: string | undefined) => {
    if (command) program.error(`pincer: unknown command '${command}' (the commands are start, doctor, init and console-link)`, { exitCode: 64 });
    await start();
  });
  program.command('start').description('run the bot (what `pincer` alone does)').action(start);

  program
    .command('doctor')
    .description('check the configuration, the model, each channel and the store; exits non-zero when anything fails')
    .option('--no-model-calls', 'skip the calls to the model that may cost money (the endpoint and model list are still checked)')
    .action(async (options: { modelCalls: boolean }) => {
      const { runDoctor } = await import('./doctor.js');
      process.exitCode = await runDoctor({ modelCalls: options.modelCalls });
    });

  program
    .command('console-link')
    .description('print a one-time sign-in link to the web console for the owner (the bot must be running here, with console.enabled and PINCER_HTTP_PORT)')
    .action(async () => {
      const { printConsoleLink } = await import('./console-link.js');
      process.exitCode = await printConsoleLink();
    });

  program
    .command('init')
    .description('set up pincer step by step: the model, the channels and their tokens, who may use the bot, the owners; writes .env and config/pincer.yaml')
    .addOption(new Option('--provider <name>', 'model provider').choices(['openai', 'openrouter', 'ollama', 'llamacpp', 'other']))
    .option('--base-url <url>', 'the model endpoint (for ollama, llamacpp and other)')
    .option('--api-key <key>', 'the model API key')
    .option('--model <name>', 'the model name')
    .option('--telegram-token <token>', 'Telegram bot token')
    .option('--discord-token <token>', 'Discord bot token')
    .option('--slack-bot-token <token>', 'Slack bot token (xoxb-)')
    .option('--slack-app-token <token>', 'Slack app-level token for Socket Mode (xapp-)')
    .option('--telegram-api-root <url>', 'Telegram Bot API root, for a self-hosted Bot API or a proxy (written as TELEGRAM_API_ROOT; default: the variable, else the public API)')
    .option('--discord-api-url <url>', 'Discord REST base such as https://discord.com/api (written as DISCORD_API_URL; default: the variable, else the public API)')
    .option('--slack-api-url <url>', 'Slack Web API base (written as SLACK_API_URL; default: the variable, else the public API)')
    .option('--owners <list>', 'owners, e.g. telegram:42,discord:1234')
    .addOption(new Option('--access <who>', 'who may use the bot on its chat platforms: owners (the default: their ids go in each allowlist) or everyone').choices(['owners', 'everyone']))
    .option('-y, --yes', 'do not ask: take the flags and defaults, and overwrite existing files')
    .option('--no-check', 'do not check the key, model and tokens by calling the services')
    .action(async (options: InitOptions) => {
      const { runInit } = await import('./init.js');
      process.exitCode = await runInit(options);
    });
  await program.parseAsync(argv);
}
