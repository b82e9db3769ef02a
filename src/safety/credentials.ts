/**
 * Finding the configured credentials in text: whole, cut short (a streamed
 * preview can stop in the middle of one), percent-encoded, base64 at any byte
 * alignment (standard and url-safe), hex, JSON `\u` escapes and HTML
 * character references (decimal or hex). Matching is literal: each form is
 * looked up by its first characters with `indexOf`, then extended character by
 * character, so a scan costs a few linear passes whatever the text holds, and
 * nothing is compiled per call. The forms written with hex digits are matched
 * whatever their case, against a copy of the text with its ASCII letters in
 * lower case.
 */

/** The shortest beginning of a credential that is hidden on its own: shorter ones say too little to be worth the false matches. */
export const MIN_PREFIX_CHARS = 8;

/** Credentials shorter than this are not matched at all: they would hide ordinary words. */
export const MIN_CREDENTIAL_CHARS = 6;

/** A part of a text, from `start` (inclusive) to `end` (exclusive). */
export interface TextSpan {
  start: number;
  end: number;
}

/**
 * Finds the configured credentials, and any beginning of one that is at least
 * {@link MIN_PREFIX_CHARS} long, in any of the forms of {@link credentialForms}.
 *
 * @example
 * const finder = new CredentialFinder([config.telegram.token]);
 * finder.find(previewText); // [{ start: 12, end: 31 }] for half of the token
 */
export class CredentialFinder {
  /** Forms grouped by the characters they must start with to count as a match. */
  private readonly byAnchor = new Map<string, string[]>();
  /** The same for the forms matched whatever their case (kept in lower case). */
  private readonly caselessByAnchor = new Map<string, string[]>();

  constructor(credentials: readonly string[]) {
    const kept = credentials.filter((c) => c.length >= MIN_CREDENTIAL_CHARS);
    for (const form of new Set(kept.flatMap(credentialForms))) group(this.byAnchor, form, MIN_PREFIX_CHARS);
    for (const form of kept.flatMap(escapedForms)) group(this.caselessByAnchor, form.text, form.anchor);
  }

  /** Whether there is anything to look for. */
  get empty(): boolean {
    return this.byAnchor.size === 0 && this.caselessByAnchor.size === 0;
  }

  /** The spans of `text` holding a credential or a beginning of one, unordered and possibly overlapping. */
  find(text: string): TextSpan[] {
    const spans = findForms(text, this.byAnchor);
    if (this.caselessByAnchor.size) spans.push(...findForms(asciiLowerCase(text), this.caselessByAnchor));
    return spans;
  }
}

/** Files `form` under its first `anchor` characters. */
function group(byAnchor: Map<string, string[]>, form: string, anchor: number): void {
  const key = form.slice(0, anchor);
  const forms = byAnchor.get(key);
  if (!forms) byAnchor.set(key, [form]);
  else if (!forms.includes(form)) forms.push(form);
}

/** The spans of `text` holding one of the forms, or a beginning of one at least as long as its anchor. */
function findForms(text: string, byAnchor: ReadonlyMap<string, string[]>): TextSpan[] {
  const spans: TextSpan[] = [];
  for (const [anchor, forms] of byAnchor) {
    for (let at = text.indexOf(anchor); at !== -1; ) {
      const end = at + Math.max(...forms.map((form) => matchLength(text, at, form, anchor.length)));
      spans.push({ start: at, end });
      // A later match that starts inside this one is cut by this span's marker, so it cannot show.
      at = text.indexOf(anchor, end);
    }
  }
  return spans;
}

/** `text` with A-Z in lower case and every other character as it was: the same length, so spans stay in place. */
function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]+/g, (run) => run.toLowerCase());
}

/** How many characters of `form` match `text` at `at`, knowing the first `known` do. */
function matchLength(text: string, at: number, form: string, known: number): number {
  let length = known;
  while (length < form.length && text.charCodeAt(at + length) === form.charCodeAt(length)) length++;
  return length;
}

/**
 * The ways a credential can appear in text: as is, percent-encoded (as
 * `encodeURIComponent` writes it, with upper- or lower-case hex), and the
 * stable part of its base64 and base64url encoding at each of the three byte
 * alignments it can have inside a longer encoded value (`user:token` in a Basic
 * header, a token in an encoded JSON body). Derived forms shorter than
 * {@link MIN_PREFIX_CHARS} are left out: they would match by chance.
 */
export function credentialForms(credential: string): string[] {
  const encoded = encodeURIComponent(credential);
  const derived = [encoded, encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()), ...base64Forms(Buffer.from(credential, 'utf8'))];
  return [...new Set([credential, ...derived.filter((form) => form.length >= MIN_PREFIX_CHARS)])];
}

/**
 * The base64 characters that depend only on the credential's bytes, for each
 * alignment (0, 1 or 2 bytes before it in the encoded value): characters that
 * mix in bits of the bytes around it differ from one value to another.
 */
function base64Forms(bytes: Buffer): string[] {
  const forms: string[] = [];
  for (let lead = 0; lead < 3; lead++) {
    const text = Buffer.concat([Buffer.alloc(lead), bytes]).toString('base64');
    const core = text.slice(Math.ceil((lead * 8) / 6), Math.floor(((lead + bytes.length) * 8) / 6));
    forms.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms;
}

/** A form matched whatever its case, and the length of its shortest beginning hidden on its own. */
export interface EscapedForm {
  /** In lower case. */
  text: string;
  /** What encodes the credential's first {@link MIN_PREFIX_CHARS} characters (or all of it, when shorter). */
  anchor: number;
}

/** How each character is written in one escaped form. */
const ESCAPES: readonly ((char: string) => string)[] = [
  // hex of the UTF-8 bytes
  (char) => Buffer.from(char, 'utf8').toString('hex'),
  // a JSON string escape per UTF-16 unit
  (char) => Array.from({ length: char.length }, (_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  // HTML character references
  (char) => `&#${char.codePointAt(0)!};`,
  (char) => `&#x${char.codePointAt(0)!.toString(16)};`,
];

/**
 * The ways a credential can appear written with hex digits or numeric
 * character references: hex (`736b2d...` for `sk-...`), a JSON string whose
 * characters are all escaped (`\u0073\u006b...`), and HTML references
 * (`&#115;&#107;...`, `&#x73;&#x6b;...`). Each one's anchor encodes as much of
 * the credential as a beginning of the credential itself needs to be hidden.
 */
export function escapedForms(credential: string): EscapedForm[] {
  const chars = [...credential];
  return ESCAPES.map((escape) => {
    const parts = chars.map(escape);
    return { text: parts.join('').toLowerCase(), anchor: parts.slice(0, MIN_PREFIX_CHARS).join('').length };
  });
}
