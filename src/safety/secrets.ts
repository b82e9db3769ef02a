/**
 * Secret detection and redaction. One redactor is shared by tool output, logs,
 * approval prompts, outbound chat messages and requests to the model, so a
 * credential that slips into any of them is replaced by the same marker.
 *
 * Every pattern is linear: character classes with bounded or single
 * quantifiers, no nested repetition, so a hostile 10 MB text cannot make a
 * scan take quadratic time.
 */
import { CredentialFinder, type TextSpan } from './credentials.js';

/** What replaces a secret. */
export const REDACTED = '[redacted]';

/** A kind of secret and how to find it. */
export interface SecretPattern {
  kind: string;
  /** Global regex. When `keepGroup` is set, that capture group (a label) stays and the rest is redacted. */
  regex: RegExp;
  keepGroup?: number;
  /**
   * A cheap test that every match passes (a literal the pattern cannot match
   * without), run before the pattern: most text holds none of them.
   */
  mayMatch?: (text: string) => boolean;
}

/** Words the case-insensitive patterns cannot match without (not global: `test` keeps no position). */
const SECRET_WORD = /secret/i;
const AUTHORIZATION_WORD = /authorization/i;
const ASSIGNED_WORDS = /key|secret|token|password/i;
const AWS_KEY_PREFIXES = ['AKIA', 'ASIA', 'ABIA', 'ACCA'];

/** The secrets pincer recognises on its own, most specific first. */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  { kind: 'pem-private-key', regex: /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|$)/g, mayMatch: (text) => text.includes('PRIVATE KEY-----') },
  { kind: 'anthropic', regex: /\bsk-ant-[A-Za-z0-9_-]{20,}/g, mayMatch: (text) => text.includes('sk-ant-') },
  { kind: 'openrouter', regex: /\bsk-or-[A-Za-z0-9_-]{20,}/g, mayMatch: (text) => text.includes('sk-or-') },
  { kind: 'openai', regex: /\bsk-[A-Za-z0-9_-]{20,}/g, mayMatch: (text) => text.includes('sk-') },
  { kind: 'aws-access-key', regex: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g, mayMatch: (text) => AWS_KEY_PREFIXES.some((prefix) => text.includes(prefix)) },
  {
    kind: 'aws-secret-key',
    regex: /(\b(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)["']?\s{0,5}[:=]\s{0,5}["']?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])/gi,
    keepGroup: 1,
    mayMatch: (text) => SECRET_WORD.test(text),
  },
  { kind: 'github', regex: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,255}/g, mayMatch: (text) => text.includes('gh') },
  { kind: 'github-pat', regex: /\bgithub_pat_[A-Za-z0-9_]{22,255}/g, mayMatch: (text) => text.includes('github_pat_') },
  { kind: 'slack', regex: /\bxox[abpors]-[A-Za-z0-9-]{10,}/g, mayMatch: (text) => text.includes('xox') },
  { kind: 'slack-app', regex: /\bxapp-[A-Za-z0-9-]{10,}/g, mayMatch: (text) => text.includes('xapp-') },
  // Also inside a Bot API address (`/bot<token>/`, `/file/bot<token>/`), where no word boundary precedes it.
  { kind: 'telegram-bot', regex: /(?:\b|(?<=\/bot))\d{5,12}:AA[A-Za-z0-9_-]{30,40}/g, mayMatch: (text) => text.includes(':AA') },
  { kind: 'discord-bot', regex: /\b[MNO][A-Za-z0-9_-]{22,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}/g, mayMatch: (text) => text.length >= 58 && text.includes('.') },
  {
    kind: 'authorization-header',
    regex: /(\bauthorization["']?\s{0,5}[:=]\s{0,5}["']?(?:Bearer|Basic|Token|Bot)\s{1,5})[A-Za-z0-9._~+/=-]{6,}/gi,
    keepGroup: 1,
    mayMatch: (text) => AUTHORIZATION_WORD.test(text),
  },
  { kind: 'bearer-token', regex: /(\bBearer\s{1,5})[A-Za-z0-9._~+/=-]{16,}/g, keepGroup: 1, mayMatch: (text) => text.includes('Bearer') },
  // The signature of a Discord attachment address: with it, anyone can fetch the file until it expires.
  { kind: 'discord-file-signature', regex: /((?:cdn|media)\.discordapp\.(?:com|net)\/attachments\/[^\s?#]{1,300}\?[^\s#]{0,200}?\bhm=)[0-9a-f]{64}/g, keepGroup: 1, mayMatch: (text) => text.includes('.discordapp.') },
  {
    kind: 'assigned-secret',
    regex: /(\b(?:api_?key|apikey|client_?secret|secret_?key|access_?token|auth_?token|password)["']?\s{0,5}[:=]\s{0,5}["']?)[^\s"',;&]{12,}/gi,
    keepGroup: 1,
    mayMatch: (text) => ASSIGNED_WORDS.test(text),
  },
];

/** Replaces secrets in text. */
export interface Redactor {
  /**
   * The text with every recognised secret and every configured credential
   * replaced by `[redacted]`; for a configured credential also its encoded
   * forms and any beginning of it long enough to matter (see `credentials.ts`).
   */
  redact(text: string): string;
}

/**
 * Builds a redactor for the built-in secret kinds plus `extraSecrets` (the
 * configured credentials, matched literally, and in the encoded forms a tool
 * or the model may write them in: percent, base64, hex, JSON `\u` escapes,
 * HTML character references). The forms are worked out here, once.
 *
 * @example
 * const redactor = createRedactor([config.telegram.token ?? '']);
 * log.info(redactor.redact(text));
 */
export function createRedactor(extraSecrets: readonly string[] = []): Redactor {
  const credentials = new CredentialFinder(extraSecrets);
  return {
    redact(text: string): string {
      let out = credentials.empty ? text : hideSpans(text, credentials.find(text));
      for (const pattern of SECRET_PATTERNS) {
        if (pattern.mayMatch && !pattern.mayMatch(out)) continue;
        out = applyPattern(out, pattern);
      }
      return out;
    },
  };
}

function applyPattern(text: string, pattern: SecretPattern): string {
  pattern.regex.lastIndex = 0;
  const { keepGroup } = pattern;
  if (keepGroup === undefined) return text.replace(pattern.regex, REDACTED);
  return text.replace(pattern.regex, (...groups: unknown[]) => `${String(groups[keepGroup])}${REDACTED}`);
}

/** `text` with each run of overlapping or touching spans replaced by one marker. */
function hideSpans(text: string, spans: TextSpan[]): string {
  if (spans.length === 0) return text;
  spans.sort((a, b) => a.start - b.start);
  let out = '';
  let kept = -1;
  for (const span of spans) {
    if (span.start <= kept) {
      kept = Math.max(kept, span.end);
      continue;
    }
    out += text.slice(Math.max(kept, 0), span.start) + REDACTED;
    kept = span.end;
  }
  return out + text.slice(kept);
}
