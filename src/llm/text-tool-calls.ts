/**
 * Recovering tool calls that a model wrote as text instead of using the
 * structured `tool_calls` field, as several open models do when their chat
 * template and the server disagree. A call is recovered only when its tool
 * exists; anything else is left in the text untouched.
 */
import { readJsonAt, skipSpaces } from './json-scan.js';
import { matchesOf } from './matches.js';
import { codeSpans, fencedBlocks, isInside, removeSpans, type Span } from './text-spans.js';
import type { ToolCall } from './types.js';

/** What {@link recoverToolCalls} found. */
export interface RecoveredToolCalls {
  /** Calls with generated ids (`recovered_<n>`) and arguments as JSON text. */
  calls: ToolCall[];
  /** The text without the recovered call markup; the input unchanged when nothing was recovered. */
  remainingText: string;
}

/** A call as written, before it gets an id. */
interface WrittenCall {
  name: string;
  arguments: unknown;
}

/** A stretch of text that holds one or more calls. */
interface Candidate extends Span {
  calls: WrittenCall[];
}

const TOOL_CALL_OPEN = /<\s*tool_calls?\s*>|<[|｜]\s*tool_calls?\s*[|｜]>/gi;
const TOOL_CALL_CLOSE = /^<\s*\/\s*tool_calls?\s*>|^<[|｜]\s*(?:\/\s*tool_calls?|tool_calls?_end)\s*[|｜]>/i;
const FUNCTION_OPEN = /<function=["']?([\w.:-]+)["']?\s*>/gi;
/** The same tag, matched only exactly where a `<tool_call>` body starts. */
const FUNCTION_AT = new RegExp(FUNCTION_OPEN.source, 'iy');
const FUNCTION_CLOSE = /^<\s*\/\s*function\s*>/i;
const PARAMETER = /<parameter=["']?([\w.-]+)["']?\s*>\n?([\s\S]*?)\n?<\s*\/\s*parameter\s*>/gi;
const MISTRAL_MARKER = /\[TOOL_CALLS\]/g;
const MISTRAL_NAMED = /^([\w.-]+)\s*(?:\[CALL_ID\]\s*\w+\s*)?\[ARGS\]/;
const FENCE_LANGUAGES = new Set(['', 'json', 'tool_call']);

/** Ids of recovered calls: unique in this process and increasing across restarts. */
let nextRecoveredId = Date.now();

/**
 * Finds calls written as `<tool_call>{"name": ..., "arguments": ...}</tool_call>`
 * (or with `parameters`), `<function=name>{...}</function>` (or with
 * `<parameter=key>` tags), a fenced json block holding exactly
 * `{"name": ..., "arguments": ...}`, a reply that is nothing but that object,
 * or Mistral's `[TOOL_CALLS] [{...}]`. Markup inside other code is ignored.
 *
 * @example
 * recoverToolCalls('<tool_call>{"name":"search","arguments":{"q":"x"}}</tool_call>', ['search'])
 * // { calls: [{ id: 'recovered_…', name: 'search', arguments: '{"q":"x"}' }], remainingText: '' }
 */
export function recoverToolCalls(text: string, knownToolNames: Iterable<string>): RecoveredToolCalls {
  const known = new Set(knownToolNames);
  const code = codeSpans(text);
  const candidates = [
    ...taggedCalls(text, code),
    ...functionTagCalls(text, code),
    ...mistralCalls(text, code),
    ...fencedCalls(text),
    ...bareCall(text),
  ].filter((candidate) => candidate.calls.length > 0 && candidate.calls.every((call) => known.has(call.name)));
  const accepted = outermost(candidates);
  if (accepted.length === 0) return { calls: [], remainingText: text };
  return { calls: accepted.flatMap((candidate) => candidate.calls).map(toToolCall), remainingText: removeSpans(text, accepted).trim() };
}

function taggedCalls(text: string, code: Span[]): Candidate[] {
  const candidates: Candidate[] = [];
  for (const match of matchesOf(TOOL_CALL_OPEN, text)) {
    if (isInside(code, match.index)) continue;
    const bodyStart = skipSpaces(text, match.index + match[0].length);
    const inner = text.startsWith('<function=', bodyStart) ? functionAt(text, bodyStart) : jsonCallsAt(text, bodyStart);
    if (!inner) continue;
    candidates.push({ start: match.index, end: consume(text, inner.end, TOOL_CALL_CLOSE), calls: inner.calls });
  }
  return candidates;
}

function jsonCallsAt(text: string, start: number): { calls: WrittenCall[]; end: number } | undefined {
  const json = readJsonAt(text, start);
  return json ? { calls: callsOf(json.value, false), end: json.end } : undefined;
}

function functionTagCalls(text: string, code: Span[]): Candidate[] {
  const candidates: Candidate[] = [];
  for (const match of matchesOf(FUNCTION_OPEN, text)) {
    if (isInside(code, match.index)) continue;
    const found = functionAt(text, match.index);
    if (found) candidates.push({ start: match.index, ...found });
  }
  return candidates;
}

/** Reads `<function=name>` followed by a JSON object or `<parameter=...>` tags. */
function functionAt(text: string, start: number): { calls: WrittenCall[]; end: number } | undefined {
  FUNCTION_AT.lastIndex = start;
  const match = FUNCTION_AT.exec(text);
  if (!match) return undefined;
  const name = match[1]!;
  const bodyStart = start + match[0].length;
  const json = text[skipSpaces(text, bodyStart)] === '{' ? readJsonAt(text, bodyStart) : undefined;
  if (json) return { calls: [{ name, arguments: json.value }], end: consume(text, json.end, FUNCTION_CLOSE) };
  const close = text.slice(bodyStart).search(/<\s*\/\s*function\s*>/i);
  if (close < 0) return undefined;
  const body = text.slice(bodyStart, bodyStart + close);
  const end = consume(text, bodyStart + close, FUNCTION_CLOSE);
  return { calls: [{ name, arguments: parametersOf(body) }], end };
}

/** `<parameter=key>value</parameter>` pairs; values that read as JSON (numbers, booleans, objects) are parsed. */
function parametersOf(body: string): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [, key, raw] of matchesOf(PARAMETER, body)) args[key!] = parseLoose(raw!);
  return args;
}

function parseLoose(raw: string): unknown {
  if (!/^\s*(?:[{[]|-?\d|true\b|false\b|null\b)/.test(raw)) return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function mistralCalls(text: string, code: Span[]): Candidate[] {
  const candidates: Candidate[] = [];
  for (const match of matchesOf(MISTRAL_MARKER, text)) {
    if (isInside(code, match.index)) continue;
    const at = skipSpaces(text, match.index + match[0].length);
    const named = MISTRAL_NAMED.exec(text.slice(at));
    const json = readJsonAt(text, named ? at + named[0].length : at);
    if (!json) continue;
    const calls = named ? [{ name: named[1]!, arguments: json.value }] : callsOf(json.value, false);
    candidates.push({ start: match.index, end: json.end, calls });
  }
  return candidates;
}

function fencedCalls(text: string): Candidate[] {
  return fencedBlocks(text)
    .filter((block) => FENCE_LANGUAGES.has(block.info.toLowerCase()))
    .map((block) => ({ start: block.start, end: block.end, calls: strictCallOf(block.body) }));
}

/** A reply that is nothing but `{"name": ..., "arguments": ...}`, as Llama models often answer. */
function bareCall(text: string): Candidate[] {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return [];
  const start = text.indexOf('{');
  return [{ start, end: start + trimmed.length, calls: strictCallOf(trimmed) }];
}

function strictCallOf(body: string): WrittenCall[] {
  try {
    return callsOf(JSON.parse(body) as unknown, true);
  } catch {
    return [];
  }
}

/**
 * The calls a parsed value describes. Strict: one object with exactly the keys
 * `name` and `arguments` (or `parameters`), so ordinary JSON in an answer is not
 * mistaken for a call. Lenient (inside explicit call markup): extra keys, an
 * OpenAI-style `function` wrapper and arrays are accepted.
 */
function callsOf(value: unknown, strict: boolean): WrittenCall[] {
  if (Array.isArray(value)) {
    if (strict) return [];
    const calls = value.map((item) => callsOf(item, false));
    return calls.every((found) => found.length === 1) ? calls.flat() : [];
  }
  if (!isRecord(value)) return [];
  if (strict && !hasExactCallShape(value)) return [];
  const source = !strict && isRecord(value.function) ? value.function : value;
  if (typeof source.name !== 'string' || !source.name) return [];
  return [{ name: source.name, arguments: source.arguments ?? source.parameters }];
}

function hasExactCallShape(value: Record<string, unknown>): boolean {
  const keys = Object.keys(value).sort().join(',');
  return keys === 'arguments,name' || keys === 'name,parameters';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The index past `pattern` when it follows `at` (after whitespace), else `at`. */
function consume(text: string, at: number, pattern: RegExp): number {
  const from = skipSpaces(text, at);
  const match = pattern.exec(text.slice(from));
  return match ? from + match[0].length : at;
}

/** Candidates that are not inside another one, in text order. */
function outermost(candidates: Candidate[]): Candidate[] {
  const sorted = [...candidates].sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Candidate[] = [];
  for (const candidate of sorted) {
    const last = kept[kept.length - 1];
    if (!last || candidate.start >= last.end) kept.push(candidate);
  }
  return kept;
}

function toToolCall(call: WrittenCall): ToolCall {
  nextRecoveredId += 1;
  return { id: `recovered_${nextRecoveredId}`, name: call.name, arguments: serialiseArguments(call.arguments) };
}

/** Objects become JSON text; text the model already wrote as JSON is kept as written. */
function serialiseArguments(args: unknown): string {
  if (args === undefined || args === null) return '{}';
  return typeof args === 'string' ? args : JSON.stringify(args);
}
