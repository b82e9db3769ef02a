/**
 * Replies that span several platform messages (parts, cut by split.ts at the
 * platform's limit): sending them, and editing them into a new text that may
 * need more or fewer parts. Adapters supply the operations on one part; this
 * file decides what happens to each part, the same way on every platform.
 */
import type { PartLedger } from './types.js';

/** Where a part sits in its reply: the first may answer a message, the last carries buttons. */
export interface PartPosition {
  index: number;
  /** Whether this is the reply's last part. */
  last: boolean;
}

/**
 * What a reply's parts remember between edits, so that an edit skips the parts
 * whose text did not change (platforms that do not report "not modified").
 */
export interface PartCache<P> {
  /** The texts shown, shared by every reply of the adapter. */
  shown: ShownParts;
  /** The cache key of a part id; ids unique only within a conversation need the conversation in it. */
  key(id: string): string;
  /** The text a part shows, compared with the remembered one. */
  text(part: P): string;
  /** Whether the edit at this position must reach the platform even when the text is unchanged (it changes buttons). */
  alwaysEdit?(position: PartPosition): boolean;
}

/** The platform operations on one part of a reply, each throwing when the platform refuses. */
export interface PartOperations<P> {
  /** Sends a new part; returns its platform id. */
  send(part: P, position: PartPosition): Promise<string>;
  /** Replaces the text of a part; returns its id, or the id of a part sent instead when the old one is gone. */
  edit(id: string, part: P, position: PartPosition): Promise<string>;
  /** Deletes a part the reply no longer needs. */
  delete(id: string): Promise<void>;
  /** Empties a part that could not be deleted (the platform's placeholder text, no buttons). */
  blank(id: string): Promise<void>;
  /** Skips edits that change nothing; omit when the platform answers "not modified" itself. */
  cache?: PartCache<P>;
  /** Told when a surplus part could not be deleted (`delete`), or not blanked either (`blank`). */
  onRefused?(id: string, step: 'delete' | 'blank', error: unknown): void;
}

/** How many part texts a {@link ShownParts} keeps by default. */
export const REMEMBERED_PARTS = 2_000;

/** Remembered in place of a text for a part that was blanked, so that it is not blanked again. */
const BLANKED = '\u0000blanked';

/** A fixed-size LRU of the text each recent part shows, keyed by {@link PartCache.key}. */
export class ShownParts {
  private readonly texts = new Map<string, string>();

  constructor(private readonly limit = REMEMBERED_PARTS) {}

  /** The remembered text of a part, marking it recently used. */
  get(key: string): string | undefined {
    const text = this.texts.get(key);
    if (text !== undefined) this.set(key, text);
    return text;
  }

  /** Remembers a part's text, evicting the least recently used part past the limit. */
  set(key: string, text: string): void {
    this.texts.delete(key);
    this.texts.set(key, text);
    if (this.texts.size > this.limit) this.texts.delete(this.texts.keys().next().value!);
  }

  /** Forgets a part (deleted, or replaced by another message). */
  delete(key: string): void {
    this.texts.delete(key);
  }

  /** How many parts are remembered. */
  get size(): number {
    return this.texts.size;
  }
}

/**
 * Sends `parts` in order; returns their ids. Parts the `ledger` holds went out
 * in an earlier attempt and are not sent again; each part sent now is recorded
 * in it before the next one goes.
 */
export async function sendParts<P>(parts: readonly P[], ops: PartOperations<P>, ledger?: PartLedger): Promise<string[]> {
  const ids: string[] = [];
  for (const [index, part] of parts.entries()) {
    const sent = ledger?.sent.get(index);
    if (sent !== undefined) {
      ids.push(sent);
      continue;
    }
    const id = await sendPart(ops, part, positionOf(index, parts));
    await ledger?.record(index, id);
    ids.push(id);
  }
  return ids;
}

/**
 * Turns the reply made of the parts `ids` into `parts` and returns the reply's
 * new ids: the parts both have are edited in place (skipped when the cache
 * shows the text unchanged), extra parts are sent after them, and surplus parts
 * are removed.
 *
 * Removing a surplus part: it is deleted; when the platform refuses the
 * deletion it is blanked instead and stays in the reply's ids (a later edit
 * that grows the reply fills it again rather than posting below an empty
 * message); when blanking is refused too, it is left as it is and dropped
 * from the ids. Either refusal is reported to `onRefused`, never thrown.
 */
export async function editParts<P>(ids: readonly string[], parts: readonly P[], ops: PartOperations<P>): Promise<string[]> {
  const result: string[] = [];
  for (const [index, part] of parts.entries()) {
    const id = ids[index];
    const position = positionOf(index, parts);
    result.push(id === undefined ? await sendPart(ops, part, position) : await editPart(ops, id, part, position));
  }
  for (const id of ids.slice(parts.length)) {
    if (await removePart(ops, id)) result.push(id);
  }
  return result;
}

function positionOf(index: number, parts: readonly unknown[]): PartPosition {
  return { index, last: index === parts.length - 1 };
}

async function sendPart<P>(ops: PartOperations<P>, part: P, position: PartPosition): Promise<string> {
  const id = await ops.send(part, position);
  remember(ops.cache, id, part);
  return id;
}

async function editPart<P>(ops: PartOperations<P>, id: string, part: P, position: PartPosition): Promise<string> {
  const cache = ops.cache;
  if (cache && !cache.alwaysEdit?.(position) && cache.shown.get(cache.key(id)) === cache.text(part)) return id;
  const edited = await ops.edit(id, part, position);
  if (edited !== id) cache?.shown.delete(cache.key(id));
  remember(cache, edited, part);
  return edited;
}

/** Deletes a surplus part, or blanks it; returns whether it is still shown (blanked). */
async function removePart<P>(ops: PartOperations<P>, id: string): Promise<boolean> {
  const cache = ops.cache;
  if (cache && cache.shown.get(cache.key(id)) === BLANKED) return true;
  try {
    await ops.delete(id);
    cache?.shown.delete(cache.key(id));
    return false;
  } catch (error) {
    ops.onRefused?.(id, 'delete', error);
  }
  try {
    await ops.blank(id);
    cache?.shown.set(cache.key(id), BLANKED);
    return true;
  } catch (error) {
    cache?.shown.delete(cache.key(id));
    ops.onRefused?.(id, 'blank', error);
    return false;
  }
}

function remember<P>(cache: PartCache<P> | undefined, id: string, part: P): void {
  cache?.shown.set(cache.key(id), cache.text(part));
}
