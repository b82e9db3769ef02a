/**
 * `pincer init` as a user runs it, on the built program: with flags and
 * `--yes` it writes `.env` (0600) and `config/pincer.yaml` with which `doctor`
 * and the bot then run; without a terminal and without `--yes` it asks for
 * them; a model the endpoint does not have writes nothing; and driven
 * through a real pseudo-terminal, its questions write a working setup.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, textReply, type FakeLlm } from '../fakes/llm/server.js';
import { ensureBuilt, MAIN } from '../e2e/build.js';
import { startFakeTelegram } from '../fakes/telegram/index.js';
import { baseEnv, cleanUp, startPincer, tempDir, waitUntil } from '../e2e/pincer.js';

const hasScript = spawnSync('script', ['--version']).status === 0;
let llm: FakeLlm | undefined;

beforeAll(() => ensureBuilt(), 130_000);
afterEach(async () => {
  await cleanUp();
  await llm?.close();
  llm = undefined;
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/main.js <args>` in `cwd` with no stdin. */
async function program(cwd: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [MAIN, ...args], { cwd, env: { ...baseEnv(join(cwd, 'data')), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

describe('pincer init', () => {
  it('with --yes and flags writes .env (0600) and config/pincer.yaml, with which doctor passes', async () => {
    llm = await startFakeLlm({ responder: () => textReply('ok') });
    const cwd = tempDir('pincer-init-');
    const run = await program(cwd, ['init', '--yes', '--provider', 'other', '--base-url', llm.url, '--model', 'fake-model', '--api-key', 'sk-init-test-key-0123456789', '--owners', 'telegram:42, terminal:owner']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const env = readFileSync(join(cwd, '.env'), 'utf8');
    expect(env).toContain(`OPENAI_BASE_URL=${llm.url}`);
    expect(env).toContain('OPENAI_API_KEY=sk-init-test-key-0123456789');
    expect(env).toContain('PINCER_MODEL=fake-model');
    expect(statSync(join(cwd, '.env')).mode & 0o777).toBe(0o600);
    const yaml = readFileSync(join(cwd, 'config', 'pincer.yaml'), 'utf8');
    expect(yaml).toMatch(/owners:\n {2}- telegram:42\n {2}- terminal:owner/);
    expect(yaml).not.toContain('sk-init');
    expect(run.stdout).not.toContain('sk-init');
    // The written setup is what the program reads: doctor passes on it, from the same folder.
    const doctor = await program(cwd, ['doctor', '--no-model-calls']);
    expect(doctor.stdout).toMatch(/✓ configuration: loaded from config\/pincer\.yaml/);
    expect(doctor.stdout).toMatch(/✓ model: fake-model/);
    expect(doctor.code, doctor.stdout).toBe(0);
  }, 60_000);

  it('writes a setup with a chat token that the bot then starts with', async () => {
    llm = await startFakeLlm({ responder: () => textReply('ok') });
    const telegram = await startFakeTelegram();
    try {
      const cwd = tempDir('pincer-init-');
      const apiRoot = { TELEGRAM_API_ROOT: telegram.apiRoot };
      const run = await program(cwd, ['init', '--yes', '--provider', 'ollama', '--base-url', llm.url, '--model', 'fake-model', '--telegram-token', telegram.token, '--owners', 'telegram:42'], apiRoot);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(readFileSync(join(cwd, '.env'), 'utf8')).toContain(`TELEGRAM_BOT_TOKEN=${telegram.token}`);
      // `npm start` is `node dist/main.js` in this folder: it reads .env and config/pincer.yaml.
      const bot = startPincer(apiRoot, { cwd, dataDir: join(cwd, 'data') });
      await bot.waitForOutput('pincer is running', 20_000);
      expect(bot.output()).toContain('"channels":["telegram"]');
    } finally {
      await telegram.close();
    }
  }, 60_000);

  it('checks the model before writing: one the endpoint does not have writes nothing', async () => {
    llm = await startFakeLlm({ responder: () => textReply('ok') });
    const cwd = tempDir('pincer-init-');
    const run = await program(cwd, ['init', '--yes', '--provider', 'other', '--base-url', llm.url, '--model', 'no-such-model']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/✗ model: .*no-such-model/);
    expect(run.stderr).toContain('nothing was written');
    expect(existsSync(join(cwd, '.env'))).toBe(false);
  }, 30_000);

  it('without a terminal and without --yes, or with values missing, says what to do and exits 64', async () => {
    const cwd = tempDir('pincer-init-');
    const bare = await program(cwd, ['init']);
    expect(bare.code).toBe(64);
    expect(bare.stderr).toContain('run it with --yes and the flags');
    const missing = await program(cwd, ['init', '--yes', '--provider', 'openai']);
    expect(missing.code).toBe(64);
    expect(missing.stderr).toContain('missing or wrong: --api-key');
    const owners = await program(cwd, ['init', '--yes', '--provider', 'ollama', '--owners', 'ada', '--no-check']);
    expect(owners.code).toBe(64);
    expect(owners.stderr).toContain('"ada" is not platform:userId');
    expect(existsSync(join(cwd, '.env'))).toBe(false);
  }, 30_000);

  it.skipIf(!hasScript)('asks its questions in a terminal and writes a setup the bot starts with', async () => {
    llm = await startFakeLlm({ responder: () => textReply('ok') });
    const cwd = tempDir('pincer-init-pty-');
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, TERM: 'xterm-256color' };
    const command = `stty cols 120 rows 40; exec ${process.execPath} ${MAIN} init`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd, env });
    let screen = '';
    child.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString('utf8')));
    const see = (text: string) => waitUntil(() => screen.includes(text), 15_000, () => `${JSON.stringify(text)} on screen:\n${screen}`);
    const key = (keys: string) => child.stdin.write(keys);
    const DOWN = '\x1b[B';
    await see('Which model provider?');
    key(`${DOWN.repeat(4)}\r`); // Other OpenAI-compatible endpoint
    await see('Base URL');
    key(`${llm.url}\r`);
    await see('API key');
    key('\r');
    await see('Model name');
    key('fake-model\r');
    await see('Channels');
    key('\r');
    await see('Owners');
    key('terminal:owner\r');
    await see('Run pincer doctor now');
    key('n\r');
    await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(readFileSync(join(cwd, '.env'), 'utf8')).toContain('PINCER_MODEL=fake-model');
    expect(readFileSync(join(cwd, 'config', 'pincer.yaml'), 'utf8')).toContain('terminal:owner');
    // The bot starts with it (no channel but the terminal, which needs a TTY: it says so and stops).
    const start = await program(cwd, []);
    expect(start.stderr).toContain('no channel is configured and no terminal is attached');
    expect(start.stderr).not.toContain('no language model is configured');
  }, 60_000);
});
