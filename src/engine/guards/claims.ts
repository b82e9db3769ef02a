/**
 * Action verification for final answers (seed 002): an answer that says it
 * wrote a workspace file no call of the turn wrote, or that cites a `path:line`
 * of the workspace that does not exist, is sent back to the model once with
 * what is wrong, before anything reaches the person.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import { matchesOf } from '../../llm/matches.js';
import { fencedBlocks, removeSpans } from '../../llm/text-spans.js';
import { normaliseWorkspacePath } from './turn-writes.js';

/**
 * A file name: something with an extension, or a path with a slash; absolute or
 * relative. Its parts are bounded, so that a long run of letters costs little.
 */
const PATH = String.raw`\/?(?:[\w.\-]{0,255}[\w\-]\.[A-Za-z0-9]{1,10}|[\w.\-]{1,255}(?:\/[\w.\-]{1,255}){1,32})`;
/** No path starts in the middle of a word or of another path. */
const PATH_START = String.raw`(?<![\w/.@:~-])`;
/** Verbs (past forms) that claim a change: "I wrote", "I've written", "Saved ...". */
const VERBS = String.raw`wrote|written|created|saved|updated|changed|edited|modified|fixed|stored|added|appended|overwrote|overwritten|replaced|rewrote|rewritten|generated|put`;
/**
 * Where a claim starts: "I wrote", "I have just updated", "I read a.md and changed",
 * or a sentence or list item that starts with the verb ("Saved the report to ...",
 * "- **Updated** `a.ts`").
 */
const CLAIM = new RegExp(
  String.raw`(?:\bI(?:'ve|\s+have|\s+just|\s+also|\s+now|\s+then|\s+finally)*\s+|\b(?<joined>and)\s+(?:then\s+|also\s+)?|^\s*(?:(?:\d{1,3}[.)]|[^\w\s]{1,3})\s*){0,2}(?:(?:and|then|also|now|done|ok|finally|first|next)[\s,:\-—]+)*)(?:${VERBS})\b`,
  'gi',
);
/** "notes.md has been written", "src/a.ts was updated", "notes.md is now saved". */
const PASSIVE = new RegExp(String.raw`${PATH_START}\`?(${PATH})\`?\s+(?:has\s+been|have\s+been|was|were|is\s+now|are\s+now)\s+(?:${VERBS})\b`, 'gi');
/** Words before the verb that make it no claim: a condition, the future, a wish, a negation, an offer. */
const NOT_A_CLAIM = /\b(will|would|could|can|should|shall|might|may|must|if|when|whenever|once|unless|not|never|cannot|unable|please|want|need|going)\b|n't\b/i;
/** A claim about an earlier turn, which this turn's calls cannot bear out. */
const EARLIER = /\b(earlier|previously|yesterday|already|last\s+time|(?:previous|earlier|last|other)\s+(?:turn|message|reply|answer|session|conversation|chat))\b/i;
/** Where the claim's clause ends: the paths after it belong to something else. */
const CLAUSE_END = /;|\s[—–]\s|\b(?:but|so|because|which|while|since|although|though|whereas|unless|except)\b/i;
/** Words right before a path that name it as a source or a contrast, not as what was written. */
const NOT_A_TARGET = /\b(?:from|see|using|per|like|than|of|not|instead\s+of|rather\s+than|based\s+on|according\s+to|(?:described|mentioned|listed|shown|explained)\s+in)\s+(?:the\s+(?:file\s+)?)?[`'"]?$/i;
/** A cited place in a file: `path:line`, `path:line:col`, `path:from-to`, `path#L12`, `path#L3-L9`. */
const CITATION = new RegExp(String.raw`${PATH_START}\`?(${PATH})\`?(?::(\d+)(?:-(\d+)|:\d+)?|#L(\d+)(?:-L?(\d+))?)(?![\w/])`, 'g');
/** A path in a claim's clause. */
const TARGET = new RegExp(String.raw`${PATH_START}\`?(${PATH})\`?`, 'g');
/** Extensions of files worth checking when a citation names one that does not exist. */
const SOURCE_EXTENSIONS = new Set('ts tsx js jsx mjs cjs py rb go rs java kt swift c h cc cpp hpp cs php sh bash zsh md txt json yaml yml toml ini cfg conf csv log html css scss sql xml'.split(' '));

/**
 * File paths the text says the assistant wrote or changed in this reply:
 * relative ones normalised as the workspace tools do (`./a.md` is `a.md`),
 * absolute ones as written. Offers, conditions, the future, negations,
 * questions, earlier turns and code blocks are no claim.
 *
 * @example
 * claimedFileWrites("I've updated `src/app.ts` and saved notes.md.") // ['src/app.ts', 'notes.md']
 */
export function claimedFileWrites(text: string): string[] {
  const found = new Set<string>();
  for (const sentence of sentences(withoutCodeBlocks(text))) {
    if (sentence.includes('?') || EARLIER.test(sentence)) continue;
    for (const claim of matchesOf(CLAIM, sentence)) {
      const before = sentence.slice(0, claim.index);
      // Only the claim's own clause counts: "The tests did not run, but I fixed a.ts" claims a.ts.
      if (NOT_A_CLAIM.test(before.split(/[,;:]|\b(?:but|so)\b/i).at(-1)!)) continue;
      // "... and changed x.ts" claims only when I did it: "The tests read a.json and created out.log" does not.
      if (claim.groups?.joined && !/\bI\b/.test(before)) continue;
      const after = sentence.slice(claim.index + claim[0].length);
      const clause = after.slice(0, CLAUSE_END.exec(after)?.index ?? after.length);
      for (const path of targetsIn(clause)) found.add(path);
    }
    for (const match of matchesOf(PASSIVE, sentence)) {
      if (!NOT_A_CLAIM.test(sentence.slice(0, match.index))) found.add(normalise(match[1]!));
    }
  }
  return [...found];
}

/** A place in a file that the text cites. */
export interface CitedLocation {
  /** The file, normalised like {@link claimedFileWrites}' paths. */
  path: string;
  /** The line cited; for a range, its last line. */
  line: number;
}

/**
 * `path:line`, `path:line:col`, `path:from-to` and `path#L12` (or `#L3-L9`)
 * citations in the text, outside URLs.
 *
 * @example
 * citedLocations('See src/app.ts:42 and docs/a.md#L3-L9.') // [{ path: 'src/app.ts', line: 42 }, { path: 'docs/a.md', line: 9 }]
 */
export function citedLocations(text: string): CitedLocation[] {
  const plain = text.replace(/\b[a-z][a-z0-9+.-]{0,30}:\/\/\S+/gi, ' ');
  const cited: CitedLocation[] = [];
  for (const match of matchesOf(CITATION, plain)) {
    if (isNumber(match[1]!)) continue;
    const first = Number(match[2] ?? match[4]);
    const last = Math.max(first, Number(match[3] ?? match[5] ?? first));
    if (first > 0) cited.push({ path: normalise(match[1]!), line: last });
  }
  return cited;
}

/** How sure the checks can be about the turn's writes. */
export interface ClaimOptions {
  /** A tool that can change files without saying which (a shell) ran: claimed writes cannot be checked. */
  writesUnknown?: boolean;
}

/**
 * The answer's claims that the workspace does not bear out, in plain words:
 * files it says it changed that no tool call of this turn (`changed`, its
 * workspace-relative paths, normalised) wrote, and cited lines or files that
 * do not exist. Only paths inside `workspaceDir` are checked: absolute paths
 * elsewhere, `..` escapes and symlinks leading out are left alone.
 */
export async function checkClaims(text: string, turnWrites: ReadonlySet<string>, workspaceDir: string, options: ClaimOptions = {}): Promise<string[]> {
  const claims = options.writesUnknown ? [] : claimedFileWrites(text);
  const citations = citedLocations(text);
  // Most answers claim and cite nothing: the workspace's real path is not looked up for them.
  if (!claims.length && !citations.length) return [];
  const given = resolve(workspaceDir);
  const root = await realpath(given).catch(() => given);
  // An absolute path may be written through the folder's real path or the one configured.
  const toWorkspace = (path: string) => insideWorkspace(root, path) ?? insideWorkspace(given, path);
  const changed = new Set([...turnWrites].map(normaliseWorkspacePath));
  const problems: string[] = [];
  for (const claimed of claims) {
    const path = toWorkspace(claimed);
    if (path === undefined || written(changed, path)) continue;
    problems.push(`you said you wrote or changed ${path}, but no tool call in this turn wrote it`);
  }
  const seen = new Set<string>();
  for (const cited of citations) {
    const path = toWorkspace(cited.path);
    const key = `${path}:${cited.line}`;
    if (path === undefined || seen.has(key)) continue;
    seen.add(key);
    const problem = await citationProblem(root, path, cited.line);
    if (problem) problems.push(problem);
  }
  return problems;
}

/** The message that sends an answer back to the model with its problems. */
export function claimsCorrection(problems: readonly string[]): string {
  return [
    'Before this answer goes to the user, check it against what actually happened:',
    ...problems.map((problem) => `- ${problem}.`),
    'Write the answer again so that it only states what the tool results show. If something was not done, say so plainly; do not claim it.',
  ].join('\n');
}

/** What is wrong with citing `line` of `path` (workspace-relative), or undefined. */
async function citationProblem(root: string, path: string, line: number): Promise<string | undefined> {
  const cite = `${path}:${line}`;
  const lines = await lineCount(root, path);
  if (lines === 'outside') return undefined;
  if (lines === 'folder') return `${cite} does not exist: ${path} is a folder, not a file`;
  if (lines === undefined) {
    // "example.com:443" names no file of the workspace; "src/gone.ts:3" does.
    const looksLikeFile = path.includes('/') || SOURCE_EXTENSIONS.has(posix.extname(path).slice(1).toLowerCase());
    return looksLikeFile ? `${cite} does not exist: there is no ${path} in the workspace` : undefined;
  }
  if (line <= lines) return undefined;
  return `${cite} does not exist: ${path} ${lines === 0 ? 'is empty' : `has ${lines} line${lines === 1 ? '' : 's'}`}`;
}

/** The lines of a workspace file, or why it has none; symlinks leading out of the workspace are not followed. */
async function lineCount(root: string, path: string): Promise<number | 'folder' | 'outside' | undefined> {
  let real: string;
  try {
    real = await realpath(join(root, path));
  } catch {
    return undefined;
  }
  if (real !== root && !real.startsWith(root + sep)) return 'outside';
  try {
    if (!(await stat(real)).isFile()) return 'folder';
    const content = await readFile(real, 'utf8');
    if (content === '') return 0;
    return content.split('\n').length - (content.endsWith('\n') ? 1 : 0);
  } catch {
    return undefined;
  }
}

/** Whether the turn wrote `path`, or a file inside it when it names a folder ("I updated src/utils"). */
function written(changed: ReadonlySet<string>, path: string): boolean {
  return changed.has(path) || [...changed].some((file) => file.startsWith(`${path}/`));
}

/** `path` relative to the workspace `root`, or undefined when it points outside. */
function insideWorkspace(root: string, path: string): string | undefined {
  const relativePath = isAbsolute(path) ? relative(root, path).split(sep).join('/') : path;
  if (relativePath === '' || isAbsolute(relativePath) || relativePath.split('/').includes('..')) return undefined;
  return normaliseWorkspacePath(relativePath);
}

/** A relative path as the workspace tools see it; an absolute one cleaned, still absolute. */
function normalise(path: string): string {
  return path.startsWith('/') ? posix.normalize(path) : normaliseWorkspacePath(path);
}

/** The paths in a claim's clause that are its targets (not its sources). */
function targetsIn(clause: string): string[] {
  const paths: string[] = [];
  for (const match of matchesOf(TARGET, clause)) {
    const path = match[1]!.replace(/\.+$/, '');
    if (isNumber(path) || NOT_A_TARGET.test(clause.slice(0, match.index))) continue;
    paths.push(normalise(path));
  }
  return paths;
}

/** A version or a number ("2.4.1", "3.5"), not a file. */
function isNumber(path: string): boolean {
  return /^\/?\d+(\.\d+)+$/.test(path);
}

/** The text without fenced code blocks: commands and file contents there are no claims. */
function withoutCodeBlocks(text: string): string {
  return removeSpans(text, fencedBlocks(text), () => '\n');
}

function sentences(text: string): string[] {
  return text.split(/(?<=[.!?])\s+|\n+/).filter((sentence) => sentence.trim());
}
