/**
 * `pincer console-link`: prints a one-time sign-in link to the web console for
 * the bot's (first) owner. It asks the running bot, on its HTTP endpoint over
 * loopback, with the key the bot wrote in its data folder: whoever can read
 * that folder is at the machine. The store is not opened here (a SQLite
 * store belongs to the running process alone).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { CLI_KEY_FILE } from '../http/console/cli-key.js';

/** Prints the link; returns the exit code. */
export async function printConsoleLink(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let config;
  try {
    config = loadConfig(env).config;
  } catch (error) {
    process.stderr.write(`pincer: ${error instanceof ConfigError ? error.message : String(error)}\n`);
    return 78;
  }
  if (!config.console.enabled || config.http.port === undefined) {
    process.stderr.write('pincer: the console is off: set console.enabled: true in the config and PINCER_HTTP_PORT, then start the bot.\n');
    return 78;
  }
  let key: string;
  try {
    key = readFileSync(join(config.dataDir, CLI_KEY_FILE), 'utf8').trim();
  } catch {
    process.stderr.write(`pincer: no console key in ${config.dataDir}: is the bot running here with the console on?\n`);
    return 69;
  }
  const host = config.http.host === '0.0.0.0' || config.http.host === '::' ? '127.0.0.1' : config.http.host;
  try {
    const response = await fetch(`http://${host.includes(':') ? `[${host}]` : host}:${config.http.port}/console/cli-link`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    const body = (await response.json()) as { url?: string; error?: string };
    if (!response.ok || !body.url) {
      process.stderr.write(`pincer: the bot refused: ${body.error ?? response.status}\n`);
      return 69;
    }
    process.stdout.write(`Sign-in link for the console (valid 10 minutes, one use):\n${body.url}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`pincer: the bot does not answer on port ${config.http.port}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 69;
  }
}
