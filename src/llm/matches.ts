/**
 * Every match of a global pattern, found on the pattern itself.
 *
 * `String.prototype.matchAll` runs a copy of the pattern, and V8 compiles the
 * copy again whenever garbage collection has emptied its cache of compiled
 * patterns: for the large patterns that read a model's reply (the tool-intent
 * phrases above all) that is milliseconds on a reply after a quiet spell.
 * `exec` on the module's own pattern keeps the code compiled for that object.
 */

/**
 * The matches of `pattern` (which must have the `g` flag) in `text`, in order,
 * as `matchAll` would give them. The pattern's `lastIndex` is 0 afterwards.
 *
 * @example
 * matchesOf(/a(\d)/g, 'a1 a2').map((m) => m[1]) // ['1', '2']
 */
export function matchesOf(pattern: RegExp, text: string): RegExpExecArray[] {
  if (!pattern.global) throw new TypeError('matchesOf needs a global (g) pattern');
  const matches: RegExpExecArray[] = [];
  pattern.lastIndex = 0;
  try {
    for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
      matches.push(match);
      // An empty match would be found again at the same place: step over it as matchAll does.
      if (match[0] === '') pattern.lastIndex = nextIndex(text, pattern.lastIndex, pattern.unicode || pattern.flags.includes('v'));
    }
  } finally {
    pattern.lastIndex = 0;
  }
  return matches;
}

/** The index after `index`: past a whole surrogate pair in unicode mode. */
function nextIndex(text: string, index: number, unicode: boolean): number {
  if (!unicode || index + 1 >= text.length) return index + 1;
  const code = text.charCodeAt(index);
  const next = text.charCodeAt(index + 1);
  return code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? index + 2 : index + 1;
}
