/**
 * Finding the configured credentials in text: whole, cut short (a streamed
 * preview can stop in the middle of one), percent-encoded, or base64 at any
 * byte alignment (standard and url-safe). Matching is literal: each form is
 * looked up by its first characters with `indexOf`, then extended character by
 * character, so a scan costs a few linear passes whatever the text holds, and
 * nothing is compiled per call.
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

  constructor(credentials: readonly string[]) {
    const forms = new Set(credentials.filter((c) => c.length >= MIN_CREDENTIAL_CHARS).flatMap(credentialForms));
    for (const form of forms) {
      const anchor = form.slice(0, MIN_PREFIX_CHARS);
      this.byAnchor.set(anchor, [...(this.byAnchor.get(anchor) ?? []), form]);
    }
  }

  /** Whether there is anything to look for. */
  get empty(): boolean {
    return this.byAnchor.size === 0;
  }

  /** The spans of `text` holding a credential or a beginning of one, unordered and possibly overlapping. */
  find(text: string): TextSpan[] {
    const spans: TextSpan[] = [];
    for (const [anchor, forms] of this.byAnchor) {
      for (let at = text.indexOf(anchor); at !== -1; ) {
        const end = at + Math.max(...forms.map((form) => matchLength(text, at, form, anchor.length)));
        spans.push({ start: at, end });
        // A later match that starts inside this one is cut by this span's marker, so it cannot show.
        at = text.indexOf(anchor, end);
      }
    }
    return spans;
  }
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
