/**
 * The setup checks behind `pincer doctor` (and the checks `pincer init` runs on
 * what it was given). Each check talks to one service the way the bot does and
 * resolves to {@link CheckResult}s; none throws, and none prints.
 *
 * - {@link checkConfig}(env): loads the configuration as the bot does; the results and the config.
 * - {@link checkModelEndpoint}(llm): the endpoint answers `GET /models` (or at least has chat completions).
 * - {@link checkModelExists}(llm): `llm.model` is in the endpoint's model list (skipped without a list).
 * - {@link checkToolCalls}(llm): the model calls a tool it is offered (one paid chat completion).
 * - {@link checkTelegram}(config.telegram): the token, with `getMe`.
 * - {@link checkDiscord}(config.discord): the token, with `GET /users/@me`, then the Message Content intent.
 * - {@link checkSlack}(config.slack): the bot token, with `auth.test`, then its scopes.
 * - {@link checkStore}(config): the store opens and a record is written, read back and deleted.
 * - {@link checkDataDir}(config): the data folder exists or can be made, is ours and is private (0700).
 *
 * Channel checks resolve to a list: the token's result first, then what depends on it.
 * Results may quote URLs and server messages: redact them before printing.
 */
import { accessSync, constants, statSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { z } from 'zod';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { ConfigError, LlmError } from '../errors.js';
import { OpenAiProvider, PLACEHOLDER_API_KEY, type LlmSettings } from '../llm/openai-provider.js';
import { PRIVATE_DIR_MODE } from '../store/private-files.js';
import { Store } from '../store/store.js';
import { withoutPassword } from '../store/url.js';
import { DEFAULT_CHECK_OPTIONS, fail, messageOf, networkReason, pass, plural, skip, type CheckResult } from './check-result.js';

export { DEFAULT_CHECK_OPTIONS, type CheckResult, type CheckStatus } from './check-result.js';
export { checkDiscord, checkSlack, checkTelegram, SLACK_BOT_SCOPES } from './channel-checks.js';

// ---------------------------------------------------------------------------
// Configuration

/** {@link checkConfig}'s answer: the lines to show and, when it loaded, the configuration. */
export interface ConfigCheck {
  results: CheckResult[];
  config?: Config;
}

/**
 * Loads the configuration exactly as the bot does: one failure per problem,
 * one warning per renamed or retired key.
 */
export function checkConfig(env: NodeJS.ProcessEnv = process.env): ConfigCheck {
  const name = 'configuration';
  try {
    const { config, file, warnings } = loadConfig(env);
    const results = [pass(name, file ? `loaded from ${file} and the environment` : 'loaded from the environment')];
    for (const warning of warnings) results.push({ name, status: 'warn', detail: warning });
    return { results, config };
  } catch (error) {
    if (!(error instanceof ConfigError)) return { results: [fail(name, messageOf(error))] };
    return { results: error.issues.map((issue) => fail(name, issue, configFix(issue))) };
  }
}

function configFix(issue: string): string {
  if (issue.startsWith('PINCER_CONFIG:')) return 'set PINCER_CONFIG to a readable config file, or unset it to use config/pincer.yaml';
  return 'correct it in the config file (PINCER_CONFIG, default config/pincer.yaml), or in the environment variable when one is named';
}

// ---------------------------------------------------------------------------
// The model

/** The endpoint URL to show: the configured base URL (or OpenAI's) without user, password or query. */
function endpointOf(llm: LlmSettings): string {
  const raw = llm.baseUrl ?? 'https://api.openai.com/v1';
  try {
    const url = new URL(raw);
    url.username = '';
    url.password = '';
    url.search = '';
    return url.toString().replace(/\/$/, '');
  } catch {
    return withoutPassword(raw);
  }
}

/** A client built as the bot builds its own, with no retries and a short timeout. */
function modelClient(llm: LlmSettings): OpenAI {
  return new OpenAI({
    baseURL: llm.baseUrl,
    apiKey: llm.apiKey || PLACEHOLDER_API_KEY,
    maxRetries: 0,
    timeout: DEFAULT_CHECK_OPTIONS.requestTimeoutMs,
  });
}

/** The model ids the endpoint lists, or the error that listing threw. */
async function listModels(llm: LlmSettings): Promise<{ ids: string[] } | { error: unknown }> {
  try {
    const ids: string[] = [];
    for await (const model of modelClient(llm).models.list()) ids.push(model.id);
    return { ids };
  } catch (error) {
    return { error };
  }
}

const statusOf = (error: unknown): number | undefined =>
  error instanceof APIError || error instanceof LlmError ? error.status : undefined;

/** The failure line for an error of the model endpoint: a refused key, a wrong URL, no server. */
function modelFailure(name: string, error: unknown, llm: LlmSettings): CheckResult {
  const url = endpointOf(llm);
  const status = statusOf(error);
  if (status === 401 || status === 403) {
    const fix = llm.apiKey
      ? `set OPENAI_API_KEY (llm.apiKey) to a valid key for ${url}`
      : `no key is set: set OPENAI_API_KEY (llm.apiKey) to the key for ${url}`;
    return fail(name, `the API key was refused (${status})`, fix);
  }
  if (status === 404) return fail(name, `nothing found at ${url} (404)`, 'check that OPENAI_BASE_URL ends in /v1 (e.g. http://localhost:11434/v1)');
  if (error instanceof APIConnectionTimeoutError || (error instanceof LlmError && error.kind === 'timeout')) {
    return fail(name, `no answer from ${url} in time`, 'check that the model server is running and OPENAI_BASE_URL (llm.baseUrl) is right');
  }
  if (error instanceof APIConnectionError || (error instanceof LlmError && error.kind === 'connection')) {
    return fail(name, `cannot connect to ${url} (${networkReason(error)})`, `start the model server, or set OPENAI_BASE_URL (llm.baseUrl) to where it listens`);
  }
  const shown = status === undefined ? messageOf(error) : `${status}: ${messageOf(error)}`;
  return fail(name, `${url} answered with an error (${shown})`, 'check OPENAI_BASE_URL, OPENAI_API_KEY and PINCER_MODEL');
}

/**
 * Whether chat completions live under the base URL, asked with an empty (so
 * refused, never billed) request: any answer but 404 means they do.
 */
async function hasChatCompletions(llm: LlmSettings): Promise<boolean> {
  try {
    await modelClient(llm).post('/chat/completions', { body: {} });
    return true;
  } catch (error) {
    return !(error instanceof APIError) || error.status !== 404;
  }
}

/**
 * The endpoint answers `GET /models` with the configured key. A server with
 * no model list passes when its chat completions exist.
 */
export async function checkModelEndpoint(llm: LlmSettings): Promise<CheckResult> {
  const name = 'model endpoint';
  const listed = await listModels(llm);
  if ('ids' in listed) return pass(name, `${endpointOf(llm)} answers (${plural(listed.ids.length, 'model')} listed)`);
  if (statusOf(listed.error) === 404 && (await hasChatCompletions(llm))) {
    return pass(name, `${endpointOf(llm)} answers (it has no model list)`);
  }
  return modelFailure(name, listed.error, llm);
}

/** `llm.model` is among the endpoint's models; skipped when the server lists none. */
export async function checkModelExists(llm: LlmSettings): Promise<CheckResult> {
  const name = 'model';
  if (!llm.model) return fail(name, 'no model is set', 'set PINCER_MODEL (llm.model) to the model name');
  const listed = await listModels(llm);
  if ('error' in listed) {
    if (statusOf(listed.error) === 404) return skip(name, `${llm.model}: the server has no model list to check it against`);
    return modelFailure(name, listed.error, llm);
  }
  if (listed.ids.length === 0) return skip(name, `${llm.model}: the server lists no models to check it against`);
  // Ollama lists `llama3:latest` for a model asked for as `llama3`.
  if (listed.ids.includes(llm.model) || listed.ids.includes(`${llm.model}:latest`)) return pass(name, llm.model);
  const some = listed.ids.slice(0, 5).join(', ') + (listed.ids.length > 5 ? ', ...' : '');
  return fail(name, `${llm.model} is not among the ${listed.ids.length} models of ${endpointOf(llm)}`, `set PINCER_MODEL (llm.model) to one the endpoint lists: ${some}`);
}

/** The tool offered by {@link checkToolCalls}. */
const PROBE_TOOL = { name: 'get_time', description: 'Returns the current time.', parameters: { type: 'object', properties: {} } };

/**
 * The model calls a tool when asked to: one small chat completion through the
 * bot's own provider (so text-written tool calls count as the bot counts them).
 * It costs a little money.
 */
export async function checkToolCalls(llm: LlmSettings): Promise<CheckResult> {
  const name = 'tool calls';
  if (!llm.model) return skip(name, 'no model is set');
  const timeoutMs = Math.min(llm.timeoutMs, DEFAULT_CHECK_OPTIONS.completionTimeoutMs);
  const provider = new OpenAiProvider({ ...llm, maxRetries: 0, stream: false, timeoutMs });
  try {
    const reply = await provider.complete({
      messages: [{ role: 'user', content: 'What time is it? Call the get_time tool to find out.' }],
      tools: [PROBE_TOOL],
    });
    if (reply.toolCalls.some((call) => call.name === PROBE_TOOL.name)) return pass(name, `${llm.model} called the tool it was offered`);
    return fail(
      name,
      `${llm.model} answered in text instead of calling the tool it was offered`,
      'use a model that supports tool (function) calling, or turn it on in the server (e.g. llama.cpp --jinja, vLLM --enable-auto-tool-choice)',
    );
  } catch (error) {
    // The endpoint answered its model list, so a 404 here is most often the model.
    if (error instanceof LlmError && error.status === 404) return fail(name, error.message, 'check PINCER_MODEL (llm.model), and that OPENAI_BASE_URL ends in /v1');
    return modelFailure(name, error, llm);
  }
}

/** What the store check writes and reads back. */
const ProbeSchema = z.object({ at: z.number() });

/** Opens the store as the bot does, writes a record, reads it back, deletes it and closes. */
export async function checkStore(config: Config): Promise<CheckResult> {
  const name = 'store';
  const shown = withoutPassword(config.storeUrl ?? `sqlite://${resolve(config.dataDir, 'pincer.sqlite')}`);
  let store: Store;
  try {
    store = await Store.open({ url: config.storeUrl, dataDir: config.dataDir, connectTimeoutMs: config.storeConnectTimeoutMs });
  } catch (error) {
    return fail(name, `cannot open ${shown}: ${messageOf(error)}`, storeFix(config));
  }
  try {
    const probes = store.namespace('doctor', ProbeSchema);
    const key = `probe-${process.pid}`;
    const written = { at: Date.now() };
    await probes.set(key, written);
    const read = await probes.get(key);
    await probes.delete(key);
    if (read?.at !== written.at) return fail(name, `${shown}: a record written could not be read back`, storeFix(config));
    return pass(name, `${shown} is writable`);
  } catch (error) {
    return fail(name, `${shown}: ${messageOf(error)}`, storeFix(config));
  } finally {
    await store.close().catch(() => undefined);
  }
}

function storeFix(config: Config): string {
  if (config.storeUrl && !config.storeUrl.startsWith('sqlite://')) return 'check that the store server is running and PINCER_STORE_URL (storeUrl) is right';
  return 'check that the data folder (PINCER_DATA_DIR) is writable by this user, or set PINCER_STORE_URL';
}

/** The data folder exists (or can be made), belongs to this user and is readable by it alone (0700). */
export function checkDataDir(config: Config): CheckResult {
  const name = 'data folder';
  const dir = resolve(config.dataDir);
  let stats: Stats;
  try {
    stats = statSync(dir);
  } catch {
    return missingDataDir(name, dir);
  }
  if (!stats.isDirectory()) return fail(name, `${dir} is not a folder`, 'set PINCER_DATA_DIR (dataDir) to a folder');
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  if (uid !== undefined && stats.uid !== uid) {
    return fail(name, `${dir} belongs to another user (uid ${stats.uid})`, `run pincer as that user, or give it to this one: chown -R ${uid} ${dir}`);
  }
  if (!writable(dir)) return fail(name, `${dir} is not writable`, `chmod 700 ${dir}`);
  const mode = stats.mode & 0o777;
  if ((mode & ~PRIVATE_DIR_MODE) !== 0) {
    return fail(name, `${dir} is readable by other users (mode ${mode.toString(8)}); it holds every conversation`, `restrict it: chmod 700 ${dir} (pincer also does this itself on start when the folder is its own)`);
  }
  return pass(name, `${dir} (mode 700)`);
}

function missingDataDir(name: string, dir: string): CheckResult {
  let parent = dirname(dir);
  while (!exists(parent) && dirname(parent) !== parent) parent = dirname(parent);
  if (writable(parent)) return pass(name, `${dir} does not exist yet; pincer creates it (mode 700)`);
  return fail(name, `${dir} does not exist and ${parent} is not writable`, 'create the folder for this user with mode 700, or set PINCER_DATA_DIR (dataDir) elsewhere');
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK | constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
