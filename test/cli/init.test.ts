/**
 * `pincer init` as a user runs it: the built program in an empty folder,
 * once with flags and `--yes`, once answering its questions on a real
 * pseudo-terminal (util-linux `script`), and refusing what it must refuse.
 * What it writes is then loaded by the project's own loader and run: doctor
 * passes on it, and the bot answers a Telegram message with it. Every URL is
 * on 127.0.0.1.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startFakeLlm, textReply, toolCallReply, type FakeLlm, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { ensureBuilt, MAIN } from '../e2e/build.js';
import { baseEnv, cleanUp, tempDir, waitUntil } from '../e2e/pincer.js';
import { OWNER, say, waitForDm } from '../e2e/telegram.js';

const API_KEY = 'sk-init-test-key-0123456789abcdef';
const hasScript = spawnSync('script', ['--version']).status === 0;

let llm: FakeLlm | undefined;
let telegram: FakeTelegram | undefined;
const children = new Set<ChildProcessWithoutNullStreams>();

beforeAll(() => ensureBuilt(), 130_000);
afterEach(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
  await cleanUp();
  await Promise.all([llm?.close(), telegram?.close()]);
  llm = telegram = undefined;
});

/** How a run of the program ended. */
interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/main.js ...args` in `cwd`, stdin closed (no terminal), with nothing of ours but `env`. */
async function program(cwd: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [MAIN, ...args], { cwd, env: { ...baseEnv(join(cwd, 'data')), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

/** A model that calls whichever tool it is offered, as the tool-call check wants. */
function callsTheTool(request: FakeLlmRequest): FakeLlmEntry {
  const name = request.tools?.[0]?.function.name;
  return name ? toolCallReply([{ name, arguments: {} }]) : textReply('no tools here');
}

/** The variables of `<cwd>/.env`. */
function dotEnvOf(cwd: string): Record<string, string | undefined> {
  return parseEnv(readFileSync(join(cwd, '.env'), 'utf8'));
}

/** Loads the written setup with the project's loader, as the bot started in `cwd` would. */
function loadWritten(cwd: string) {
  return loadConfig({ ...dotEnvOf(cwd), PINCER_CONFIG: join(cwd, 'config', 'pincer.yaml') });
}

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('pincer init without questions', () => {
  it('writes .env (0600) and config/pincer.yaml from the flags; the config loads cleanly, doctor passes and the bot answers on Telegram', async () => {
    llm = await startFakeLlm({ responder: () => textReply('hello from the model') });
    telegram = await startFakeTelegram();
    const cwd = tempDir('pincer-init-');
    const run = await program(cwd, [
      'init',
      '--yes',
      '--provider',
      'ollama',
      '--base-url',
      llm.url,
      '--model',
      'fake-model',
      '--telegram-token',
      telegram.token,
      '--telegram-api-root',
      telegram.apiRoot,
      '--owners',
      `telegram:${OWNER.id},terminal:owner`,
      '--no-check',
    ]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout + run.stderr).not.toContain(telegram.token);
    expect(llm.served).toBe(0);

    expect(modeOf(join(cwd, '.env'))).toBe(0o600);
    expect(dotEnvOf(cwd)).toMatchObject({
      OPENAI_BASE_URL: llm.url,
      PINCER_MODEL: 'fake-model',
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      PINCER_OWNERS: `telegram:${OWNER.id},terminal:owner`,
    });
    expect(dotEnvOf(cwd).OPENAI_API_KEY).toBeUndefined();
    const yaml = readFileSync(join(cwd, 'config', 'pincer.yaml'), 'utf8');
    expect(yaml).not.toContain(telegram.token);

    const loaded = loadWritten(cwd);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.config.llm).toMatchObject({ baseUrl: llm.url, model: 'fake-model' });
    expect(loaded.config.owners).toEqual([`telegram:${OWNER.id}`, 'terminal:owner']);
    expect(loaded.config.telegram.token).toBe(telegram.token);
    // Only the owners, by default: the Telegram allowlist holds the owner's id.
    expect(loaded.config.telegram.allowedUsers).toEqual([String(OWNER.id)]);

    // The program reads both files from the folder by itself, the Bot API root included.
    const doctor = await program(cwd, ['doctor', '--no-model-calls']);
    expect(doctor.stdout).toContain('✓ configuration: loaded from config/pincer.yaml');
    expect(doctor.stdout).toContain('✓ telegram token');
    expect(doctor.stdout).toContain('✓ telegram access: only the 1 listed user and the owners');
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);

    const bot = spawn(process.execPath, [MAIN], { cwd, env: baseEnv(join(cwd, 'data')), stdio: 'pipe' });
    children.add(bot);
    let output = '';
    bot.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    bot.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    say(telegram, 'hi');
    await waitForDm(telegram, 'hello from the model', () => output, 20_000);
  }, 90_000);

  it("writes each platform's allowlist with its owners by default; opens it only when asked, and says so", async () => {
    const cwd = tempDir('pincer-init-');
    const discordId = '123456789012345678';
    const base = ['init', '--yes', '--provider', 'ollama', '--model', 'llama3.1', '--no-check', '--telegram-token', '12345:AAtoken', '--discord-token', 'discord-token-abcdefghijklmnop'];

    const ownerless = await program(cwd, [...base, '--owners', 'telegram:42']);
    expect(ownerless.code).toBe(64);
    expect(ownerless.stderr).toContain('--owners: only the owners may use the bot, and none is on discord: add yours (e.g. discord:');
    expect(ownerless.stderr).toContain('or pass --access everyone');
    expect(existsSync(join(cwd, '.env'))).toBe(false);

    const owners = await program(cwd, [...base, '--owners', `telegram:42,discord:${discordId},terminal:owner`]);
    expect(owners.code, owners.stderr).toBe(0);
    const closed = loadWritten(cwd).config;
    expect(closed.telegram.allowedUsers).toEqual(['42']);
    expect(closed.discord.allowedUsers).toEqual([discordId]);
    expect(owners.stdout).not.toContain('admits everyone');

    const everyone = await program(cwd, [...base, '--owners', 'telegram:42', '--access', 'everyone']);
    expect(everyone.code, everyone.stderr).toBe(0);
    const open = loadWritten(cwd).config;
    expect(open.telegram.allowedUsers).toEqual([]);
    expect(open.discord.allowedUsers).toEqual([]);
    expect(everyone.stdout).toContain('! telegram admits everyone: telegram.allowedUsers is empty');
    expect(everyone.stdout).toContain('! discord admits everyone: discord.allowedUsers is empty');
  }, 30_000);

  it('checks the key, the model and a tool call before writing, without printing the key', async () => {
    llm = await startFakeLlm({ responder: callsTheTool, apiKey: API_KEY });
    const cwd = tempDir('pincer-init-');
    const args = ['init', '--yes', '--provider', 'other', '--base-url', llm.url, '--api-key', API_KEY];
    const run = await program(cwd, [...args, '--model', 'fake-model']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/✓ model endpoint: .*\n✓ model: fake-model\n✓ tool calls: /);
    expect(run.stdout + run.stderr).not.toContain(API_KEY);
    expect(dotEnvOf(cwd)).toMatchObject({ OPENAI_API_KEY: API_KEY, OPENAI_BASE_URL: llm.url, PINCER_MODEL: 'fake-model' });
    expect(loadWritten(cwd).warnings).toEqual([]);

    const elsewhere = tempDir('pincer-init-');
    const wrong = await program(elsewhere, [...args, '--model', 'no-such-model']);
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toMatch(/✗ model: no-such-model is not among/);
    expect(wrong.stderr).toContain('pass --no-check to write anyway. Nothing written.');
    expect(existsSync(join(elsewhere, '.env'))).toBe(false);
    expect(existsSync(join(elsewhere, 'config'))).toBe(false);
  }, 60_000);

  it('names every missing or wrong value and exits 64, writing nothing', async () => {
    const cwd = tempDir('pincer-init-');
    const bare = await program(cwd, ['init']);
    expect(bare.code).toBe(64);
    expect(bare.stderr).toContain('there is no terminal to ask in, and the flags are not enough');
    expect(bare.stderr).toContain('--provider: missing');

    const run = await program(cwd, ['init', '--yes', '--provider', 'openai', '--slack-bot-token', 'xoxb-1', '--owners', 'ada,telegram:@ada']);
    expect(run.code).toBe(64);
    expect(run.stderr).toContain('--api-key: missing (OpenAI needs an API key)');
    expect(run.stderr).toContain('--slack-app-token: missing');
    expect(run.stderr).toContain('--owners: "ada" is not platform:userId');
    expect(run.stderr).toContain('--owners: "telegram:@ada": not a telegram user id');

    const root = await program(cwd, ['init', '--yes', '--provider', 'ollama', '--model', 'llama3.1', '--telegram-token', '12345:AAtoken', '--owners', 'telegram:42', '--telegram-api-root', 'http://127.0.0.1:8081/']);
    expect(root.code).toBe(64);
    expect(root.stderr).toContain('--telegram-api-root (or TELEGRAM_API_ROOT): must not end with a slash');

    const other = await program(cwd, ['init', '--yes', '--provider', 'other', '--no-check']);
    expect(other.code).toBe(64);
    expect(other.stderr).toMatch(/--base-url: missing[^\n]*\n {2}--model: missing/);
    expect(existsSync(join(cwd, '.env'))).toBe(false);
  }, 30_000);

  it('replaces existing files only with --yes, keeping the variables of .env it does not set, and tightens its mode', async () => {
    const cwd = tempDir('pincer-init-');
    mkdirSync(join(cwd, 'config'));
    writeFileSync(join(cwd, 'config', 'pincer.yaml'), 'logLevel: debug\n');
    writeFileSync(join(cwd, '.env'), 'PINCER_MODEL=old-model\nPINCER_STORE_URL=sqlite://./data/kept.sqlite\n', { mode: 0o644 });
    const args = ['init', '--provider', 'ollama', '--model', 'llama3.1', '--no-check'];

    const refused = await program(cwd, args);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('.env and config/pincer.yaml already exist; pass --yes to replace them');
    expect(readFileSync(join(cwd, 'config', 'pincer.yaml'), 'utf8')).toBe('logLevel: debug\n');

    const replaced = await program(cwd, [...args, '--yes']);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(modeOf(join(cwd, '.env'))).toBe(0o600);
    expect(dotEnvOf(cwd)).toMatchObject({
      PINCER_MODEL: 'llama3.1',
      OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
      PINCER_STORE_URL: 'sqlite://./data/kept.sqlite',
    });
    const loaded = loadWritten(cwd);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.config.logLevel).toBe('info');
  }, 30_000);
});

// CSI sequences (colours, cursor moves, line clears) and carriage returns.
// eslint-disable-next-line no-control-regex -- removing escape sequences is the point
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r/g;
const DOWN = '\x1b[B';

/** `pincer init` on a pseudo-terminal in `cwd`, with what a person would type and see. */
function initOnPty(cwd: string, env: Record<string, string>, args: string[] = []) {
  const command = `stty cols 120 rows 40; exec '${process.execPath}' '${MAIN}' init ${args.map((arg) => `'${arg}'`).join(' ')}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd, env: { ...baseEnv(join(cwd, 'data')), TERM: 'xterm-256color', ...env } });
  children.add(child);
  let raw = '';
  child.stdout.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const screen = () => raw.replace(ANSI, '');
  // Prompts are redrawn as keys arrive, so text is looked for after what was seen last.
  let seen = 0;
  return {
    exited,
    screen,
    /** Keys as the terminal sends them: Enter is a carriage return. */
    type: (keys: string) => child.stdin.write(keys),
    /** Waits until `text` appears after the text seen last. */
    async see(text: string, timeoutMs = 20_000): Promise<void> {
      const at = await waitUntil(
        () => {
          const found = screen().indexOf(text, seen);
          return found >= 0 ? found + 1 : undefined;
        },
        timeoutMs,
        () => `${JSON.stringify(text)} on screen after ${JSON.stringify(screen().slice(seen - 40, seen))}:\n${screen()}`,
      );
      seen = at - 1 + text.length;
    },
  };
}

describe.skipIf(!hasScript)('pincer init on a pseudo-terminal', () => {
  it('asks its questions, checks the model, writes a setup and runs doctor on it', async () => {
    llm = await startFakeLlm({ responder: callsTheTool, apiKey: API_KEY });
    const cwd = tempDir('pincer-init-pty-');
    const pty = initOnPty(cwd, {});

    await pty.see('Which model provider?');
    pty.type(`${DOWN.repeat(4)}\r`); // another OpenAI-compatible endpoint
    await pty.see("The endpoint's base URL");
    pty.type(`${llm.url}\r`);
    await pty.see('API key (Enter for none)');
    pty.type(`${API_KEY}\r`);
    await pty.see('Which model?');
    await pty.see('fake-model'); // listed by the endpoint
    pty.type(`${DOWN}\r`); // another model...
    await pty.see('Model name');
    pty.type('no-such-model\r');
    await pty.see('model: no-such-model is not among the 1 models');
    await pty.see('The model check failed. What now?');
    pty.type('\r'); // change the answers: each is asked again, with what was given before
    await pty.see('Which model provider?');
    pty.type('\r');
    await pty.see("The endpoint's base URL");
    pty.type('\r');
    await pty.see('API key (Enter for none)');
    pty.type(`${API_KEY}\r`);
    await pty.see('Which model?');
    pty.type('\r');
    await pty.see('tool calls: fake-model called the tool it was offered');
    await pty.see('Which chat platforms?');
    pty.type(`${DOWN.repeat(3)} \r`); // None: the terminal only
    await pty.see('terminal:owner  whoever runs pincer in a terminal');
    await pty.see('Owners, comma-separated (Enter for terminal:owner)');
    pty.type('\r');
    await pty.see('Run pincer doctor now');
    pty.type('y');
    await pty.see('All checks passed.');
    expect(await pty.exited, pty.screen()).toBe(0);

    expect(pty.screen()).not.toContain(API_KEY);
    expect(modeOf(join(cwd, '.env'))).toBe(0o600);
    expect(dotEnvOf(cwd)).toEqual({ OPENAI_API_KEY: API_KEY, OPENAI_BASE_URL: llm.url, PINCER_MODEL: 'fake-model', PINCER_OWNERS: 'terminal:owner' });
    const loaded = loadWritten(cwd);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.config.owners).toEqual(['terminal:owner']);
  }, 60_000);

  it('skips the questions its flags answer, and checks a Telegram token before taking it', async () => {
    llm = await startFakeLlm({ responder: callsTheTool });
    telegram = await startFakeTelegram();
    const cwd = tempDir('pincer-init-pty-');
    const pty = initOnPty(cwd, { TELEGRAM_API_ROOT: telegram.apiRoot }, ['--provider', 'other', '--base-url', llm.url, '--model', 'fake-model']);

    await pty.see('API key (Enter for none)'); // the one model question no flag answered
    pty.type('\r');
    await pty.see('tool calls: fake-model called the tool it was offered');
    await pty.see('Which chat platforms?');
    pty.type(' \r'); // Telegram
    await pty.see('Telegram bot token (from @BotFather');
    pty.type('not-a-token\r');
    await pty.see('this does not look like a Telegram bot token');
    pty.type(`${'\x7f'.repeat('not-a-token'.length)}${telegram.token}\r`);
    await pty.see('telegram token: the bot is @');
    await pty.see('Who may use the bot on its chat platforms?');
    pty.type('\r'); // Only the owners, the default
    await pty.see('telegram:123456789');
    await pty.see('Owners, comma-separated (at least one on telegram)');
    pty.type('terminal:owner\r');
    await pty.see('only the owners may use the bot, and none is on telegram');
    pty.type(`,telegram:${OWNER.id}\r`);
    await pty.see('Run pincer doctor now');
    pty.type('n');
    expect(await pty.exited, pty.screen()).toBe(0);

    expect(pty.screen()).not.toContain(telegram.token);
    // The Bot API root its check used is written too, so that doctor and the bot reach the same server.
    expect(pty.screen()).toContain(`Telegram API: ${telegram.apiRoot}`);
    expect(dotEnvOf(cwd)).toEqual({
      OPENAI_BASE_URL: llm.url,
      PINCER_MODEL: 'fake-model',
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      PINCER_OWNERS: `terminal:owner,telegram:${OWNER.id}`,
    });
    expect(loadWritten(cwd).config.telegram.token).toBe(telegram.token);
    expect(loadWritten(cwd).config.telegram.allowedUsers).toEqual([String(OWNER.id)]);
  }, 60_000);

  it('writes nothing when a question is cancelled with Ctrl+C', async () => {
    const cwd = tempDir('pincer-init-pty-');
    const pty = initOnPty(cwd, {});
    await pty.see('Which model provider?');
    pty.type('\x03');
    await pty.see('setup cancelled, nothing written');
    expect(await pty.exited).toBe(1);
    expect(existsSync(join(cwd, '.env'))).toBe(false);
    expect(existsSync(join(cwd, 'config'))).toBe(false);
  }, 30_000);

  it('asks before replacing existing files, and a no leaves them as they were', async () => {
    const cwd = tempDir('pincer-init-pty-');
    writeFileSync(join(cwd, '.env'), 'PINCER_MODEL=old-model\n');
    const pty = initOnPty(cwd, {});
    await pty.see('.env already exists. Replace it?');
    pty.type('n');
    await pty.see('setup cancelled, nothing written');
    expect(await pty.exited).toBe(1);
    expect(readFileSync(join(cwd, '.env'), 'utf8')).toBe('PINCER_MODEL=old-model\n');
  }, 30_000);
});
