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
