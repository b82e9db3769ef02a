/**
 * The secrets in MCP server configs (`mcp.servers.<name>.env` and `.headers`).
 *
 * - A value may reference the environment (and so `.env`) as `${VAR}`, anywhere
 *   in it (`Bearer ${SEARCH_TOKEN}`); references are expanded when the config is
 *   loaded, and an unset one is a config error naming the server and the key.
 *   `$${VAR}` stands for a literal `${VAR}`.
 * - Every value that may be a secret is given to the redactor (after expansion),
 *   so it never shows in logs, tool output or audit records.
 * - A config file that holds such a value literally (with no `${VAR}` in it)
 *   must be readable by its owner only (mode 0600).
 *
 * Which values may be secrets is a heuristic that errs on the safe side: every
 * header except a few plain ones (`Accept`, `Content-Type`, `User-Agent`...),
 * and every env value except `PATH`, `HOME` and values that are plainly
 * settings: a number, a yes/no word, a file path, a URL without user, query or
 * fragment, one word in lower or upper case (`production`, `INFO`). A key that
 * names a secret (token, secret, password, key, auth...) makes its value one
 * whatever it looks like.
 */
import { INHERITED_VARIABLES } from './mcp-environment.js';

/** The two places of a server config that hold values for the server. */
export type McpValuePlace = 'env' | 'headers';

/** What {@link mcpSecrets} reads of a server. */
export interface McpServerValues {
  env: Record<string, string>;
  headers: Record<string, string>;
}

const PLACES: readonly McpValuePlace[] = ['env', 'headers'];

/** `${NAME}`, or `$${NAME}` for the literal text. */
const REFERENCE = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Headers that carry no credential. */
const PLAIN_HEADERS: ReadonlySet<string> = new Set(['accept', 'accept-encoding', 'accept-language', 'cache-control', 'content-type', 'mcp-protocol-version', 'user-agent']);

/** Key names that say their value is a secret. */
const SECRET_KEY = /pass|pwd|secret|token|key|auth|cred|cookie|session|private|signature|jwt|dsn/i;

/** Values that are plainly settings, not secrets. */
const PLAIN_VALUES: readonly RegExp[] = [
  /^-?\d+(?:\.\d+)?$/,
  /^(?:true|false|yes|no|on|off)$/i,
  /^(?:\/|\.\.?\/|~\/|[A-Za-z]:[\\/])/,
  /^[a-z][a-z_.-]{0,31}$/,
  /^[A-Z][A-Z_.-]{0,31}$/,
];

/** `Bearer <credential>` and its cousins: the credential alone is redacted too. */
const AUTH_SCHEME = /^(bearer|basic|token|bot|apikey|api-key)\s+(\S+)$/i;

/** Whether `value` holds a `${VAR}` reference. */
export function hasReference(value: string): boolean {
  return [...value.matchAll(REFERENCE)].some((match) => !match[1]);
}

/** Whether the value of `key` in a server's `env` or `headers` may be a secret (see the module comment). */
export function isSecretValue(place: McpValuePlace, key: string, value: string): boolean {
  if (!value) return false;
  if (place === 'headers') return !PLAIN_HEADERS.has(key.toLowerCase());
  if ((INHERITED_VARIABLES as readonly string[]).includes(key.toUpperCase())) return false;
  if (SECRET_KEY.test(key)) return true;
  return !PLAIN_VALUES.some((plain) => plain.test(value)) && !isPlainUrl(value);
}

/**
 * Expands the `${VAR}` references of every server's `env` and `headers` in a
 * config as read from its file, in place. Returns one line per reference to a
 * variable that is unset or empty.
 */
export function expandReferences(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): string[] {
  const issues: string[] = [];
  for (const entry of rawValues(raw)) {
    const expanded = entry.value.replace(REFERENCE, (match, escaped: string, name: string) => {
      if (escaped) return match.slice(1);
      const value = env[name];
      if (value) return value;
      issues.push(`${entry.path}: \${${name}} is not set; set ${name} in the environment or in .env (the MCP server "${entry.server}" needs it for ${entry.key})`);
      return match;
    });
    entry.set(expanded);
  }
  return issues;
}

/** The keys (`mcp.servers.search.headers.Authorization`) of a raw config whose value is a secret written out, not a `${VAR}` reference. */
export function literalSecretKeys(raw: Record<string, unknown>): string[] {
  return rawValues(raw)
    .filter((entry) => !hasReference(entry.value) && isSecretValue(entry.place, entry.key, entry.value))
    .map((entry) => entry.path);
}

/**
 * Why a config file may not be used: it holds MCP secrets literally while
 * others can read it. `mode` is the file's `stat` mode.
 */
export function secretFileIssues(file: string, mode: number, raw: Record<string, unknown>, platform: NodeJS.Platform = process.platform): string[] {
  // Windows has no such mode bits; its files are protected by their ACLs.
  if (platform === 'win32' || (mode & 0o077) === 0) return [];
  const shown = (mode & 0o777).toString(8).padStart(4, '0');
  return literalSecretKeys(raw).map(
    (key) =>
      `${key}: ${file} holds this secret as plain text and others may read the file (mode ${shown}); run \`chmod 600 ${file}\`, or write the value as \${VAR} and set VAR in the environment or in .env`,
  );
}

/** The values of every configured server that the redactor must know (see the module comment). */
export function mcpSecrets(mcp: { servers: Record<string, McpServerValues> }): string[] {
  return [...new Set(Object.values(mcp.servers).flatMap(serverSecrets))];
}

/** One server's secret values, and the credential alone of `Bearer <credential>`-style values. */
export function serverSecrets(server: McpServerValues): string[] {
  const secrets: string[] = [];
  for (const place of PLACES) {
    for (const [key, value] of Object.entries(server[place])) {
      if (!isSecretValue(place, key, value)) continue;
      secrets.push(value, ...schemeCredentials(value));
    }
  }
  return secrets;
}

/** For `Bearer x`: `x`; for `Basic <base64>`: also `user:password` and the password. */
function schemeCredentials(value: string): string[] {
  const match = AUTH_SCHEME.exec(value.trim());
  if (!match) return [];
  const credential = match[2]!;
  if (match[1]!.toLowerCase() !== 'basic') return [credential];
  const decoded = Buffer.from(credential, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon > 0 ? [credential, decoded, decoded.slice(colon + 1)] : [credential];
}

function isPlainUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return /^(?:https?|wss?):$/.test(url.protocol) && !url.username && !url.password && !url.search && !url.hash;
}

/** One string value of a server's `env` or `headers` in a raw config. */
interface RawValue {
  server: string;
  place: McpValuePlace;
  key: string;
  value: string;
  /** `mcp.servers.<server>.<place>.<key>`. */
  path: string;
  set(value: string): void;
}

/** The string values of every server's `env` and `headers`; anything else is left to the schema to report. */
function rawValues(raw: Record<string, unknown>): RawValue[] {
  const servers = record(record(raw.mcp)?.servers);
  if (!servers) return [];
  const values: RawValue[] = [];
  for (const [server, config] of Object.entries(servers)) {
    for (const place of PLACES) {
      const entries = record(record(config)?.[place]);
      for (const [key, value] of Object.entries(entries ?? {})) {
        if (typeof value !== 'string') continue;
        values.push({ server, place, key, value, path: `mcp.servers.${server}.${place}.${key}`, set: (next) => (entries![key] = next) });
      }
    }
  }
  return values;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
