/**
 * Action verification for final answers (seed 002): an answer that says it
 * wrote a workspace file no call of the turn wrote, or that cites a `path:line`
 * of the workspace that does not exist, is sent back to the model once with
 * what is wrong, before anything reaches the person.
 */
import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import { normaliseWorkspacePath } from './turn-writes.js';

/** A file name: something with an extension, or a relative path with a slash. */
const PATH = String.raw`[\w.\-]*[\w\-]\.[A-Za-z0-9]{1,10}|[\w.\-]+(?:\/[\w.\-]+)+`;
/** Verbs that claim a change, in the forms "I wrote", "I've written", "Saved". */
const VERBS = String.raw`wrote|written|write|created|create|saved|save|updated|update|changed|change|edited|edit|modified|modify|fixed|fix|stored|store|added|add|appended|append|overwrote|overwritten|replaced|replace`;
/** "I wrote", "I have updated", "I've saved", or a sentence that starts with the verb ("Saved the report to ..."). */
const ACTIVE = new RegExp(String.raw`(?:\bI\s*(?:'ve|\s+have|\s+just|\s+also|\s+now)*\s+|^\s*(?:(?:and|then|also|now|done|ok)[\s,:]+)?)(?:${VERBS})\b([^\n]{0,120})`, 'i');
/** "notes.md has been written", "src/a.ts was updated", "notes.md is now saved". */
const PASSIVE = new RegExp(String.raw`\`?(${PATH})\`?\s+(?:has\s+been|have\s+been|was|were|is\s+now)\s+(?:${VERBS})`, 'gi');
/** A sentence that only talks about a change: a question, a condition, the future, a negation. */
const NOT_A_CLAIM = /\?|\b(will|would|could|can|should|shall|might|may|if|when|once|not|never|cannot|unable|please)\b|n't\b|\byou\s+(?:can|could|should|may|might|need|want|will)\b/i;
/** Extensions of files worth checking when a citation names one that does not exist. */
const SOURCE_EXTENSIONS = new Set('ts tsx js jsx mjs cjs py rb go rs java kt swift c h cc cpp hpp cs php sh bash zsh md txt json yaml yml toml ini cfg conf csv log html css scss sql xml'.split(' '));

/**
 * Workspace-relative file paths the text says the assistant wrote or changed.
 *
 * @example
 * claimedFileWrites("I've updated `src/app.ts` and saved notes.md.") // ['src/app.ts', 'notes.md']
 */
export function claimedFileWrites(text: string): string[] {
  const found = new Set<string>();
  for (const sentence of sentences(withoutCode(text))) {
    if (NOT_A_CLAIM.test(sentence)) continue;
    const active = ACTIVE.exec(sentence);
    if (active) for (const path of pathsIn(active[1]!)) found.add(path);
    for (const match of sentence.matchAll(PASSIVE)) found.add(normaliseWorkspacePath(match[1]!));
  }
  return [...found];
}

/** `path:line`, `path:line:col` and `path#L12` citations in the text, outside URLs. */
export function citedLocations(text: string): { path: string; line: number }[] {
  const plain = text.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, ' ');
  const cited: { path: string; line: number }[] = [];
  const pattern = new RegExp(String.raw`(?<![\w/.@-])\`?(${PATH})(?::(\d+)(?::\d+)?|#L(\d+))`, 'g');
  for (const match of plain.matchAll(pattern)) {
    const line = Number(match[2] ?? match[3]);
    if (line > 0) cited.push({ path: normaliseWorkspacePath(match[1]!), line });
  }
  return cited;
}

/** What the checks know about the turn. */
export interface ClaimContext {
  /** Workspace-relative paths this turn's tools wrote (normalised). */
  changed: ReadonlySet<string>;
  /** Absolute path of the workspace. */
  workspaceDir: string;
  /** A tool that can change files without saying which (a shell) ran: claimed writes cannot be checked. */
  writesUnknown?: boolean;
}

/**
 * The answer's claims that the workspace does not bear out, in plain words.
 * Only paths inside the workspace are checked.
 */
export async function checkClaims(text: string, context: ClaimContext): Promise<string[]> {
  const problems: string[] = [];
  if (!context.writesUnknown) {
    for (const path of claimedFileWrites(text)) {
      if (!insideWorkspace(path) || context.changed.has(path)) continue;
      problems.push(`you said you wrote or changed ${path}, but no tool call in this turn wrote it`);
    }
  }
  const seen = new Set<string>();
  for (const { path, line } of citedLocations(text)) {
    const key = `${path}:${line}`;
    if (!insideWorkspace(path) || seen.has(key)) continue;
    seen.add(key);
    const lines = await lineCount(join(context.workspaceDir, path));
    if (lines === undefined) {
      if (path.includes('/') || SOURCE_EXTENSIONS.has(extensionOf(path))) problems.push(`you cited ${key}, but ${path} does not exist in the workspace`);
    } else if (line > lines) {
      problems.push(`you cited ${key}, but ${path} has only ${lines} line${lines === 1 ? '' : 's'}`);
    }
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

/** Text without fenced code blocks and inline code spans that are whole commands. */
function withoutCode(text: string): string {
  return text.replace(/^\s{0,3}(`{3,}|~{3,})[\s\S]*?^\s{0,3}\1\s*$/gm, ' ');
}

function sentences(text: string): string[] {
  return text.split(/(?<=[.!?])\s+|\n+/).filter((sentence) => sentence.trim());
}

function pathsIn(fragment: string): string[] {
  const paths: string[] = [];
  for (const match of fragment.matchAll(new RegExp(String.raw`(?<![\w/.@:-])\`?(${PATH})\`?`, 'g'))) {
    const path = match[1]!.replace(/\.+$/, '');
    if (/^\d+(\.\d+)+$/.test(path)) continue; // a version or a number, not a file
    paths.push(normaliseWorkspacePath(path));
  }
  return paths;
}

function insideWorkspace(path: string): boolean {
  return path !== '' && !isAbsolute(path) && !relative('.', path).startsWith('..');
}

function extensionOf(path: string): string {
  const dot = path.lastIndexOf('.');
  return dot < 0 ? '' : path.slice(dot + 1).toLowerCase();
}

async function lineCount(file: string): Promise<number | undefined> {
  try {
    if (!(await stat(file)).isFile()) return undefined;
    const content = await readFile(file, 'utf8');
    if (content === '') return 0;
    return content.split('\n').length - (content.endsWith('\n') ? 1 : 0);
  } catch {
    return undefined;
  }
}
