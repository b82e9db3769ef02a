import { describe, expect, it } from 'vitest';
import { createRedactor, REDACTED, SECRET_PATTERNS } from '../../src/safety/secrets.js';

/*
 * The shapes of each built-in secret kind, their labels and their edges: what is hidden, what stays, and that
 * ordinary words which merely contain a prefix are left alone. Fake credentials are assembled at run time so
 * secret scanners do not flag the repository.
 */
const chars = (n: number, alphabet = 'aB3xK9mQ7zR2') => Array.from({ length: n }, (_, i) => alphabet[i % alphabet.length]).join('');
const upper = (n: number) => chars(n, 'ABCDEFGHJKLMNPQRSTUVWXYZ234567');
const redactor = createRedactor();
const hidden = (text: string) => redactor.redact(text);

describe('built-in secret kinds: every variant of a prefix', () => {
  it.each(['AKIA', 'ASIA', 'ABIA', 'ACCA'])('an AWS access key id starting %s', (prefix) => {
    expect(hidden(`id ${prefix}${upper(16)} end`)).toBe(`id ${REDACTED} end`);
  });

  it.each(['ghp', 'gho', 'ghu', 'ghs', 'ghr'])('a GitHub token starting %s_', (prefix) => {
    expect(hidden(`token ${prefix}_${chars(36)} end`)).toBe(`token ${REDACTED} end`);
  });

  it.each(['a', 'b', 'p', 'o', 'r', 's'])('a Slack token starting xox%s-', (letter) => {
    expect(hidden(`token xox${letter}-${chars(12)} end`)).toBe(`token ${REDACTED} end`);
  });

  it.each(['M', 'N', 'O'])('a Discord bot token starting %s, at the shortest and longest lengths', (first) => {
    const short = `${first}${chars(22)}.${chars(6)}.${chars(27)}`;
    const long = `${first}${chars(27)}.${chars(6)}.${chars(40)}`;
    expect(hidden(`a ${short} b ${long} c`)).toBe(`a ${REDACTED} b ${REDACTED} c`);
  });

  it('a Telegram bot token with a 5-digit or a 12-digit bot id, hidden whole', () => {
    expect(hidden(`t 12345:AA${chars(30)} end`)).toBe(`t ${REDACTED} end`);
    expect(hidden(`t 123456789012:AA${chars(40)} end`)).toBe(`t ${REDACTED} end`);
  });

  it('a Telegram bot token inside a Bot API or file address, where no word boundary precedes it', () => {
    const token = `123456789:AA${chars(33)}`;
    expect(hidden(`GET https://api.telegram.org/file/bot${token}/photos/file_7.jpg`)).toBe(`GET https://api.telegram.org/file/bot${REDACTED}/photos/file_7.jpg`);
    expect(hidden(`POST https://api.telegram.org/bot${token}/sendMessage`)).toBe(`POST https://api.telegram.org/bot${REDACTED}/sendMessage`);
    // Digits glued to other letters are not a token's start.
    expect(hidden(`robot123456789:AA${chars(33)}`)).toBe(`robot123456789:AA${chars(33)}`);
  });

  it("a Discord attachment address keeps its path and loses its signature", () => {
    const signature = 'a1b2c3d4'.repeat(8);
    const url = `https://cdn.discordapp.com/attachments/111/222/photo.png?ex=6650c0de&is=664f6f5e&hm=${signature}&`;
    expect(hidden(`see ${url}`)).toBe(`see https://cdn.discordapp.com/attachments/111/222/photo.png?ex=6650c0de&is=664f6f5e&hm=${REDACTED}&`);
    expect(hidden(`https://media.discordapp.net/attachments/1/2/a.png?hm=${signature}`)).toBe(`https://media.discordapp.net/attachments/1/2/a.png?hm=${REDACTED}`);
    // Another site's hm parameter is not Discord's signature.
    expect(hidden(`https://example.com/a.png?hm=${signature}`)).toBe(`https://example.com/a.png?hm=${signature}`);
  });

  it('a GitHub fine-grained token at its shortest, hidden whole', () => {
    expect(hidden(`token github_pat_${chars(22)} end`)).toBe(`token ${REDACTED} end`);
  });

  it('Anthropic, OpenRouter and OpenAI keys at their shortest, hidden whole', () => {
    for (const prefix of ['sk-ant-', 'sk-or-', 'sk-']) expect(hidden(`key ${prefix}${chars(20)} end`)).toBe(`key ${REDACTED} end`);
  });

  it('a Slack app token at its shortest, hidden whole', () => {
    expect(hidden(`token xapp-${chars(10)} end`)).toBe(`token ${REDACTED} end`);
  });
});

describe('built-in secret kinds: ordinary text stays', () => {
  it.each([
    ['a word that ends in "sk-"', 'the risk-assessment-of-the-quarterly-budget is due'],
    ['a word that ends in "sk-ant-"', 'a desk-ant-colony-in-the-garden-shed-is-small'],
    ['a word that ends in "sk-or-"', 'a whisk-or-spoon-for-the-batter-is-fine-here'],
    ['a shorter AWS-like id', `id AKIA${upper(15)} end`],
    ['an AWS-like id inside a longer word', `id AKIA${upper(20)} end`],
    ['a word that ends in "ghp_"', `x bighp_${chars(36)} end`],
    ['a word that ends in "xoxb-"', `the fixoxb-${chars(12)} end`],
    ['a word that ends in "xapp-"', `the myxapp-${chars(12)} end`],
    ['a number glued to a longer one before ":AA"', `n 1234567890123:AA${chars(33)} end`],
    ['a Discord-like token glued to a word', `x aM${chars(23)}.${chars(6)}.${chars(30)} end`],
    ['"Bearer" followed by ordinary words', 'the Bearer of bad news arrived'],
    ['a short password', 'password=hunter2'],
    ['a word that ends in "password"', `mypassword=${chars(14)}`],
  ])('%s', (_what, text) => {
    expect(hidden(text)).toBe(text);
  });
});

describe('labelled secrets: the label stays, the value goes', () => {
  const value = chars(40, 'aB3/xK9+mQ7zR2');

  it.each([
    ['aws_secret_access_key=', ''],
    ['AWS_SECRET_ACCESS_KEY: "', '"'],
    ['aws_secret_key = ', ''],
    ['awssecretaccesskey:', ''],
    ['secret_access_key =     ', ''],
    ['secretaccesskey\t=\t', ''],
    ["'aws_secret_access_key'     : '", "'"],
  ])('an AWS secret key after %j', (label, close) => {
    expect(hidden(`${label}${value}${close} next`)).toBe(`${label}${REDACTED}${close} next`);
  });

  it('an AWS secret key of 40 characters only, not a longer value', () => {
    const longer = `${value}x`;
    expect(hidden(`aws_secret_access_key=${longer}`)).toBe(`aws_secret_access_key=${longer}`);
  });

  it.each([
    'Authorization: Bearer ',
    'authorization: Basic ',
    'AUTHORIZATION=Token ',
    'Authorization:Bot ',
    '"Authorization": "Bearer ',
    "'authorization'     :     'Basic     ",
  ])('an Authorization header written %j', (label) => {
    expect(hidden(`${label}abcdef next`)).toBe(`${label}${REDACTED} next`);
  });

  it('an Authorization header value shorter than 6 characters stays', () => {
    expect(hidden('Authorization: Basic abcde')).toBe('Authorization: Basic abcde');
  });

  it('a bearer token after up to five spaces, of 16 characters or more', () => {
    const token = chars(16, 'aB3.xK9-mQ7z_R2~');
    expect(hidden(`use Bearer     ${token} now`)).toBe(`use Bearer     ${REDACTED} now`);
    expect(hidden(`use Bearer\t${token} now`)).toBe(`use Bearer\t${REDACTED} now`);
    expect(hidden(`use Bearer ${token.slice(0, 15)} now`)).toBe(`use Bearer ${token.slice(0, 15)} now`);
  });

  it.each([
    'api_key=',
    'apikey: ',
    'API_KEY = ',
    'client_secret=',
    'clientsecret=',
    'secret_key=',
    'secretkey=',
    'access_token=',
    'accesstoken=',
    'auth_token=',
    'authtoken=',
    'password=',
    'PASSWORD:',
    '"password": "',
    "'api_key'     =     '",
  ])('an assigned secret after %j, up to the next delimiter', (label) => {
    for (const end of ['', ' next', '"', "'", ',x', ';x', '&x=1']) {
      expect(hidden(`${label}${chars(12)}${end}`), end).toBe(`${label}${REDACTED}${end}`);
    }
  });
});

describe('private keys', () => {
  it.each(['RSA', 'EC', 'OPENSSH', 'ENCRYPTED', 'DSA'])('a %s private key block, with the text around it kept', (type) => {
    const body = `${chars(64)}\n${chars(64)}\n`;
    const block = `-----BEGIN ${type} PRIVATE KEY-----\n${body}-----END ${type} PRIVATE KEY-----`;
    expect(hidden(`before\n${block}\nafter`)).toBe(`before\n${REDACTED}\nafter`);
  });

  it('two key blocks are hidden one by one, keeping what lies between them', () => {
    const block = (type: string) => `-----BEGIN ${type} PRIVATE KEY-----\n${chars(64)}\n-----END ${type} PRIVATE KEY-----`;
    expect(hidden(`${block('RSA')}\nmiddle line\n${block('EC')}\nend`)).toBe(`${REDACTED}\nmiddle line\n${REDACTED}\nend`);
  });

  it('a public key stays', () => {
    const block = `-----BEGIN PUBLIC KEY-----\n${chars(64)}\n-----END PUBLIC KEY-----`;
    expect(hidden(block)).toBe(block);
  });
});

describe('configured credentials', () => {
  it('several credentials are each hidden, whichever comes first in the text', () => {
    const first = `first-${chars(16)}`;
    const second = `second-${chars(16, 'zyxwvutsrqpo')}`;
    const custom = createRedactor([first, second]);
    expect(custom.redact(`a ${second} b ${first} c ${second} d`)).toBe(`a ${REDACTED} b ${REDACTED} c ${REDACTED} d`);
  });
});

describe("each pattern's quick pre-check", () => {
  /** Texts each pattern matches, in the cases and spellings its flags allow. */
  const samples = [
    `-----BEGIN RSA PRIVATE KEY-----\n${chars(40)}\n-----END RSA PRIVATE KEY-----`,
    `sk-ant-${chars(24)}`,
    `sk-or-${chars(24)}`,
    `sk-${chars(24)}`,
    `ASIA${upper(16)}`,
    `AWS_SECRET_ACCESS_KEY=${chars(40)}`,
    `Secret_Access_Key: "${chars(40)}"`,
    `ghs_${chars(36)}`,
    `github_pat_${chars(30)}`,
    `xoxb-${chars(12)}`,
    `xapp-${chars(12)}`,
    `/bot123456789:AA${chars(33)}/getMe`,
    `N${chars(24)}.${chars(6)}.${chars(30)}`,
    `AUTHORIZATION: bot ${chars(20)}`,
    `Bearer ${chars(20)}`,
    `https://cdn.discordapp.com/attachments/1/2/a.png?ex=1&is=2&hm=${'ab12'.repeat(16)}&`,
    `PassWord = ${chars(16)}`,
    `Client-secret is not a label, but CLIENT_SECRET=${chars(16)} is`,
    `ApiKey: ${chars(16)}`,
    `Auth_Token=${chars(16)}`,
  ];

  it.each(SECRET_PATTERNS.map((pattern) => [pattern.kind, pattern] as const))('lets through every text %s matches', (_kind, pattern) => {
    const matched = samples.filter((text) => new RegExp(pattern.regex.source, pattern.regex.flags).test(text));
    expect(matched.length).toBeGreaterThan(0);
    for (const text of matched) expect(pattern.mayMatch?.(text) ?? true).toBe(true);
  });

  it('skips the patterns whose literal a text lacks, and redacts the same as running every pattern', () => {
    const everyPattern = (text: string) =>
      SECRET_PATTERNS.reduce((out, { regex, keepGroup }) => out.replace(new RegExp(regex.source, regex.flags), (...groups: unknown[]) => (keepGroup === undefined ? REDACTED : `${String(groups[keepGroup])}${REDACTED}`)), text);
    const ordinary = 'The result of 3 + 1 is 4. Let me know if you need anything else.';
    expect(SECRET_PATTERNS.filter((pattern) => pattern.mayMatch?.(ordinary) ?? true).map((pattern) => pattern.kind)).toEqual(['discord-bot']);
    for (const text of [...samples, ordinary, samples.join(' and ')]) expect(hidden(text)).toBe(everyPattern(text));
  });
});
