/**
 * `pincer init`: sets pincer up in the working folder. In a terminal it asks
 * step by step (the model, the channels and their tokens, who may use the
 * bot, the owners); with `--yes`, or without a terminal, it takes the flags
 * and the defaults (only the owners may use the bot unless `--access
 * everyone`). Either
 * way it checks what it was given (unless `--no-check`), then writes `.env`
 * (mode 0600) and `config/pincer.yaml`. Nothing is written before every
 * answer is in; no secret is ever printed.
 *
 * Exit codes: 0 written; 1 cancelled, refused to replace files, or a check
 * failed without questions; 64 missing or bad flags in a run without questions.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { cancel, intro, log, outro } from '@clack/prompts';
import { ConfigError } from '../errors.js';
import { answersFromFlags, channelsGiven, flagProblems, readFlags, type ChannelName, type InitAnswers, type InitFlags, type InitOptions } from './init-answers.js';
import { answersRedactor, anyFailed, checkChannelAnswers, checkModelAnswers, describeResult } from './init-checks.js';
import { existingSetupFiles, MANAGED_ENV_NAMES, readDotEnv, SETUP_FILES, envValues, validateSetup, writeSetupFiles } from './init-files.js';
import { askAccess, askChannels, askModel, askOwners, confirmDoctor, confirmReplacing, SetupCancelled } from './init-prompts.js';
import { openChannelText } from './open-channels.js';

export type { InitOptions } from './init-answers.js';

/** Exit code of a run without questions that lacks values or got bad ones (EX_USAGE). */
export const USAGE_EXIT_CODE = 64;

/** Runs the setup in the working folder; resolves to the exit code. */
export async function runInit(options: InitOptions): Promise<number> {
  const flags = readFlags(options);
  const folder = process.cwd();
  const interactive = !flags.yes && Boolean(process.stdin.isTTY && process.stdout.isTTY);
  try {
    return interactive ? await askedSetup(flags, folder) : await unattendedSetup(flags, folder);
  } catch (error) {
    if (!(error instanceof SetupCancelled)) throw error;
    cancel(error.message);
    return 1;
  }
}

// ---------------------------------------------------------------------------
// Without questions

function complain(lines: readonly string[]): void {
  process.stderr.write(`${lines.map((line) => `pincer init: ${line}`).join('\n')}\n`);
}

/** Takes the flags and the defaults; refuses to guess what has no default, or to replace files unasked. */
async function unattendedSetup(flags: InitFlags, folder: string): Promise<number> {
  const problems = flagProblems(flags);
  if (problems.length) {
    const why = flags.yes ? 'with --yes nothing is asked' : 'there is no terminal to ask in';
    const hint = flags.yes ? 'Give them as flags.' : 'Give them as flags, or run pincer init in a terminal to be asked.';
    const listed = problems.map((problem) => `  ${problem}\n`).join('');
    process.stderr.write(`pincer init: ${why}, and the flags are not enough:\n${listed}${hint} Nothing written.\n`);
    return USAGE_EXIT_CODE;
  }
  const existing = existingSetupFiles(folder);
  if (existing.length && !flags.yes) {
    const verb = existing.length === 1 ? 'exists' : 'exist';
    complain([`${existing.join(' and ')} already ${verb}; pass --yes to replace them, or run pincer init in a terminal to be asked. Nothing written.`]);
    return 1;
  }
  const answers = answersFromFlags(flags);
  const invalid = setupProblems(answers);
  if (invalid.length) {
    complain([...invalid, 'Nothing written.']);
    return USAGE_EXIT_CODE;
  }
  if (flags.check && !(await checksPass(answers, channelsGiven(answers)))) {
    complain(['a check failed: correct the flags, or pass --no-check to write anyway. Nothing written.']);
    return 1;
  }
  const previousEnv = readDotEnv(folder);
  writeSetupFiles(folder, answers, previousEnv);
  process.stdout.write(`Wrote ${SETUP_FILES.env} (mode 600) and ${SETUP_FILES.config}.\n`);
  for (const warning of [...accessWarnings(answers), ...environmentWarnings(answers, previousEnv)]) process.stdout.write(`! ${warning}\n`);
  process.stdout.write('Next: pincer doctor checks the setup; pincer starts the bot.\n');
  return 0;
}

/** What opening the bot to everyone means, once per channel it opens. */
function accessWarnings(answers: InitAnswers): string[] {
  return answers.access === 'everyone' ? channelsGiven(answers).map((channel) => `${openChannelText(channel)}.`) : [];
}

/** Runs every check and prints the results as doctor does; true when none failed. */
async function checksPass(answers: InitAnswers, channels: readonly ChannelName[]): Promise<boolean> {
  const results = [...(await checkModelAnswers(answers))];
  for (const channel of channels) results.push(...(await checkChannelAnswers(channel, answers)));
  const redactor = answersRedactor(answers);
  for (const result of results) process.stdout.write(`${redactor.redact(describeResult(result))}\n`);
  return !anyFailed(results);
}

/** What the bot would refuse in the answers, one line per problem (the values are not quoted for secrets). */
function setupProblems(answers: InitAnswers): string[] {
  try {
    validateSetup(answers);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
}

// ---------------------------------------------------------------------------
// With questions

async function askedSetup(flags: InitFlags, folder: string): Promise<number> {
  intro('pincer init');
  const existing = existingSetupFiles(folder);
  if (existing.length && !(await confirmReplacing(existing))) throw new SetupCancelled();
  log.step('The model');
  const model = await askModel(flags);
  log.step('The chat platforms');
  const { channels, tokens } = await askChannels(flags);
  // Without a chat platform only the terminal's own user can reach the bot: nothing to ask.
  const access = channels.length ? await askAccess(flags) : 'owners';
  log.step('The owners');
  const owners = await askOwners(flags, channels, access);
  const answers: InitAnswers = { ...model, ...tokens, owners, access };
  const invalid = setupProblems(answers);
  if (invalid.length) {
    for (const problem of invalid) log.error(problem);
    cancel('setup stopped, nothing written');
    return 1;
  }
  const previousEnv = readDotEnv(folder);
  writeSetupFiles(folder, answers, previousEnv);
  log.success(`Wrote ${SETUP_FILES.env} (mode 600: ${Object.keys(envValues(answers)).join(', ')}) and ${SETUP_FILES.config}.`);
  for (const warning of [...accessWarnings(answers), ...environmentWarnings(answers, previousEnv)]) log.warn(warning);
  if (!(await confirmDoctor())) {
    outro('Done. Check with pincer doctor; start with pincer.');
    return 0;
  }
  outro('Running pincer doctor.');
  await runDoctor(previousEnv);
  return 0;
}

// ---------------------------------------------------------------------------
// The environment around the files

/**
 * Whether `name` was set in the environment before this program started
 * (the previous `.env` was loaded into it at start, without overriding).
 */
function setOutside(name: string, previousEnv: Record<string, string>): boolean {
  const value = process.env[name];
  return value !== undefined && value !== '' && value !== previousEnv[name];
}

/** Variables of this shell that win over what was just written, and a config file the bot would read instead. */
function environmentWarnings(answers: InitAnswers, previousEnv: Record<string, string>): string[] {
  const written = envValues(answers);
  const warnings = MANAGED_ENV_NAMES.filter((name) => setOutside(name, previousEnv) && process.env[name] !== written[name]).map(
    (name) => `${name} is set in this shell's environment and wins over .env; unset it to use what was written.`,
  );
  const configFile = process.env.PINCER_CONFIG;
  if (configFile && resolve(configFile) !== resolve(SETUP_FILES.config)) {
    warnings.push(`PINCER_CONFIG names ${configFile}: the bot reads that file, not ${SETUP_FILES.config}; unset it to use what was written.`);
  }
  return warnings;
}

/**
 * Runs `pincer doctor` as a new process of this same program. It reads the new
 * `.env` itself, so the values the previous one put into this process are left out.
 */
async function runDoctor(previousEnv: Record<string, string>): Promise<number> {
  const env = { ...process.env };
  for (const [name, value] of Object.entries(previousEnv)) if (env[name] === value) delete env[name];
  const entry = process.argv[1];
  if (!entry) return 1;
  const child = spawn(process.execPath, [...process.execArgv, entry, 'doctor'], { stdio: 'inherit', env });
  return new Promise((done) => {
    child.once('error', () => done(1));
    child.once('exit', (code) => done(code ?? 1));
  });
}
