import { describe, expect, it } from 'vitest';
import { createRedactor, REDACTED } from '../../src/safety/secrets.js';

// Fake credentials assembled at run time so secret scanners do not flag the repository.
const chars = (n: number, alphabet = 'aB3xK9mQ7zR2') => Array.from({ length: n }, (_, i) => alphabet[i % alphabet.length]).join('');
const upper = (n: number) => chars(n, 'ABCDEFGHJKLMNPQRSTUVWXYZ234567');

const SAMPLES: Record<string, string> = {
  'OpenAI legacy key': 'sk-' + chars(48),
  'OpenAI project key': 'sk-' + 'proj-' + chars(120, 'aB3_xK9-mQ7zR2'),
  'Anthropic key': 'sk-' + 'ant-api03-' + chars(93, 'aB3_xK9-mQ7zR2'),
  'OpenRouter key': 'sk-' + 'or-v1-' + chars(64, '0123456789abcdef'),
  'AWS access key id': 'AKIA' + upper(16),
  'GitHub classic token': 'ghp' + '_' + chars(36),
  'GitHub OAuth token': 'gho' + '_' + chars(36),
  'GitHub fine-grained token': 'github' + '_pat_' + chars(82, 'aB3_xK9mQ7zR2'),
  'Slack bot token': 'xox' + 'b-1234567890-1234567890123-' + chars(24),
  'Slack user token': 'xox' + 'p-1234567890-1234567890123-' + chars(32),
  'Slack app token': 'xa' + 'pp-1-A0123456789-1234567890123-' + chars(64, '0123456789abcdef'),
  'Telegram bot token': '123456789:' + 'AA' + chars(33, 'aB3_xK9-mQ7zR2'),
  'Discord bot token': 'MTA' + chars(23) + '.' + chars(6) + '.' + chars(38, 'aB3_xK9-mQ7zR2'),
};

describe('createRedactor', () => {
  const redactor = createRedactor();

  it.each(Object.entries(SAMPLES))('redacts a %s in running text', (_kind, secret) => {
    const text = `before ${secret} after`;
    const out = redactor.redact(text);
    expect(out).toBe(`before ${REDACTED} after`);
  });

  it('redacts an AWS secret access key given in context, keeping the label', () => {
    const secret = chars(40, 'aB3/xK9+mQ7zR2');
    expect(redactor.redact(`aws_secret_access_key = ${secret}`)).toBe(`aws_secret_access_key = ${REDACTED}`);
    expect(redactor.redact(`"SecretAccessKey": "${secret}"`)).toBe(`"SecretAccessKey": "${REDACTED}"`);
  });

  it('redacts a PEM private key block whole, and an unterminated one to the end', () => {
    const body = `${chars(64)}\n${chars(64)}\n`;
    const block = `-----BEGIN RSA PRIVATE KEY-----\n${body}-----END RSA PRIVATE KEY-----`;
    expect(redactor.redact(`key:\n${block}\nafter`)).toBe(`key:\n${REDACTED}\nafter`);
    expect(redactor.redact(`-----BEGIN PRIVATE KEY-----\n${body}`)).toBe(REDACTED);
  });

  it('redacts Authorization headers and bearer tokens, keeping the scheme', () => {
    const token = chars(40, 'aB3.xK9-mQ7zR2');
    expect(redactor.redact(`Authorization: Bearer ${token}`)).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redactor.redact(`authorization: Bot ${token}`)).toBe(`authorization: Bot ${REDACTED}`);
    expect(redactor.redact(`curl -H "Bearer ${token}"`)).toBe(`curl -H "Bearer ${REDACTED}"`);
  });

  it('always redacts the configured credentials, even ones of no known shape', () => {
    const custom = createRedactor(['my-own-webhook-secret', 'short']);
    expect(custom.redact('url?secret=my-own-webhook-secret&x=1')).toBe(`url?secret=${REDACTED}&x=1`);
    // Too short to scrub by value without mangling ordinary words.
    expect(custom.redact('a short note')).toBe('a short note');
  });

  it('leaves ordinary text alone', () => {
    const text = 'The task-list has 12 items; see https://example.com/a?b=c and sk-short. AKIA is an acronym.';
    expect(redactor.redact(text)).toBe(text);
  });

  it('scans a megabyte of text without catastrophic backtracking', () => {
    const hostile = `${'-----BEGIN PRIVATE KEY-----'.repeat(2)}${'a'.repeat(1_000_000)}${'sk-'.repeat(1000)}`;
    const started = performance.now();
    redactor.redact(hostile);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('createRedactor: configured credentials in part or encoded', () => {
  // Shaped like no built-in kind, so only the configured-credential matching can catch it.
  const token = '7000001:AAF' + chars(24, '0123456789abcdef');
  const apiKey = 'key/with+odd:chars=' + chars(21);
  const redactor = createRedactor([token, apiKey]);

  /** Every beginning of `form` of at least 8 characters that still shows in `text`. */
  const leakedPrefixes = (text: string, form: string) =>
    Array.from({ length: form.length - 7 }, (_, i) => form.slice(0, i + 8)).filter((prefix) => text.includes(prefix));

  it('hides every beginning of a credential of 8 characters or more, as a streamed preview cuts it', () => {
    for (let cut = 8; cut <= token.length; cut++) {
      const out = redactor.redact(`the token is ${token.slice(0, cut)} …`);
      expect(out).toBe(`the token is ${REDACTED} …`);
    }
  });

  it('leaves a beginning shorter than 8 characters and ordinary words alone', () => {
    const text = `id ${token.slice(0, 7)} and key/wit are fine`;
    expect(redactor.redact(text)).toBe(text);
  });

  it('hides a credential followed by other text with one marker, keeping the text after it', () => {
    expect(redactor.redact(`a ${token}${token.slice(0, 10)} b`)).toBe(`a ${REDACTED} b`);
    expect(redactor.redact(`${token.slice(0, 12)}xyz`)).toBe(`${REDACTED}xyz`);
  });

  it('hides the percent-encoded form and its beginnings, with upper- or lower-case hex', () => {
    const encoded = encodeURIComponent(apiKey);
    expect(encoded).not.toBe(apiKey);
    for (const form of [encoded, encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase())]) {
      const url = `https://example.com/hook?key=${form}&x=1`;
      expect(redactor.redact(url)).toBe(`https://example.com/hook?key=${REDACTED}&x=1`);
      const cut = redactor.redact(`?key=${form.slice(0, form.length - 6)}`);
      expect(leakedPrefixes(cut, form)).toEqual([]);
    }
  });

  it('hides base64 and base64url of a credential at every byte alignment, and their beginnings', () => {
    for (const lead of ['', 'u', 'us', 'use', 'user:']) {
      for (const encoding of ['base64', 'base64url'] as const) {
        const encoded = Buffer.from(`${lead}${apiKey}${lead}`).toString(encoding);
        const out = redactor.redact(`Authorization: Basic ${encoded}`);
        // Decoding what is left must not give the credential back, nor a long piece of it.
        const rest = out.replace(REDACTED, '');
        expect(out).toContain(REDACTED);
        expect(Buffer.from(rest.split(' ').at(-1)!, encoding).toString('latin1')).not.toContain(apiKey.slice(0, 8));
        const half = redactor.redact(encoded.slice(0, Math.ceil(encoded.length / 2)));
        expect(half).toContain(REDACTED);
      }
    }
  });

  it('hides the standard base64 of a Basic auth header for user:token', () => {
    const header = `Basic ${Buffer.from(`bot:${token}`).toString('base64')}`;
    const out = redactor.redact(header);
    expect(out).toMatch(/^Basic .{0,8}\[redacted\].{0,4}$/);
  });

  it('scans a megabyte full of near misses quickly', () => {
    const nearMiss = `${token.slice(0, 9)}!`;
    const hostile = nearMiss.repeat(100_000);
    const started = performance.now();
    const out = redactor.redact(hostile);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(leakedPrefixes(out, token)).toEqual([]);
  });
});

describe('createRedactor: configured credentials written with hex digits or character references', () => {
  const secret = 'sk-abc123';
  const redactor = createRedactor([secret]);
  /** Each character of the secret written one way. */
  const hexParts = [...secret].map((char) => Buffer.from(char).toString('hex'));
  const unicodeParts = [...secret].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const decimalParts = [...secret].map((char) => `&#${char.charCodeAt(0)};`);
  const hexEntityParts = [...secret].map((char) => `&#x${char.charCodeAt(0).toString(16)};`);
  const [hex, unicode, decimal, hexEntities] = [hexParts, unicodeParts, decimalParts, hexEntityParts].map((parts) => parts.join('')) as [string, string, string, string];

  it('hides hex in lower or upper case', () => {
    expect(hex).toBe('736b2d616263313233');
    for (const form of [hex, hex.toUpperCase()]) expect(redactor.redact(`bytes: ${form}.`)).toBe(`bytes: ${REDACTED}.`);
  });

  it('hides a JSON string of \\u escapes, with hex digits in either case', () => {
    expect(unicode.startsWith('\\u0073\\u006b')).toBe(true);
    for (const form of [unicode, unicode.replace(/[a-f]/g, (digit) => digit.toUpperCase())]) {
      expect(redactor.redact(`{"key":"${form}","n":1}`)).toBe(`{"key":"${REDACTED}","n":1}`);
    }
  });

  it('hides HTML character references, decimal or hex', () => {
    expect(decimal.startsWith('&#115;&#107;')).toBe(true);
    for (const form of [decimal, hexEntities, hexEntities.toUpperCase()]) expect(redactor.redact(`<p>${form}</p>`)).toBe(`<p>${REDACTED}</p>`);
  });

  it('hides a beginning of these forms as long as the beginning of the credential that is hidden, and no shorter one', () => {
    for (const parts of [hexParts, unicodeParts, decimalParts, hexEntityParts]) {
      const eight = parts.slice(0, 8).join('');
      expect(redactor.redact(`[${eight}]`)).toBe(`[${REDACTED}]`);
      // Seven characters' worth says too little: escaped text that only starts the same way stays.
      const seven = `${parts.slice(0, 7).join('')}${parts[0]}`;
      expect(redactor.redact(`[${seven}]`)).toBe(`[${seven}]`);
    }
  });

  it('leaves a credential shorter than the minimum alone in every form, as before', () => {
    const short = createRedactor(['abcde']);
    const forms = [Buffer.from('abcde').toString('hex'), '\\u0061\\u0062\\u0063\\u0064\\u0065', '&#97;&#98;&#99;&#100;&#101;'];
    for (const form of forms) expect(short.redact(form)).toBe(form);
  });

  it('scans a megabyte of escaped text quickly', () => {
    const hostile = `${unicode.slice(0, 8 * 6)}\\u0000`.repeat(20_000) + decimal.slice(0, 20).repeat(20_000);
    const started = performance.now();
    const out = redactor.redact(hostile);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(out).not.toContain(unicode.slice(0, 8 * 6));
  });
});
