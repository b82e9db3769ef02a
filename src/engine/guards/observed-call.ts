/**
 * A tool call as the loop detectors see it, and the forms they compare: the
 * parsed arguments and a key that is equal for the same call whatever the key
 * order, spacing or spelling of a relative path.
 */
import { argumentsOf, comparable } from './call-similarity.js';

/** One tool call as the detectors see it. */
export interface ObservedCall {
  name: string;
  /** Arguments as the model sent them (JSON text). */
  arguments: string;
  ok: boolean;
  /** A short error for a failed call, for the summary. */
  error?: string;
}

/** A call with its comparable forms, computed once and shared by every detector. */
export interface SeenCall {
  call: ObservedCall;
  /** Name and canonical arguments: equal for the same call. */
  key: string;
  args: Record<string, unknown>;
}

/** What a detector found. */
export interface LoopFinding {
  detector: 'similar' | 'window' | 'cycle' | 'failures';
  /** `warn`: one before the limit (similar calls only); `limit`: a loop. */
  level: 'warn' | 'limit';
  /** In plain words, for the model and for a person. */
  summary: string;
}

/** One detector: shown every call in order, it says what it found; reset forgets. */
export interface CallDetector {
  see(seen: SeenCall): LoopFinding | undefined;
  reset(): void;
}

/** Parses a call once for the detectors. */
export function seeCall(call: ObservedCall): SeenCall {
  const args = argumentsOf(call.arguments);
  return { call, key: `${call.name}(${comparable(args)})`, args };
}

/**
 * `files_read with path "a.txt"`: the tool and its first arguments, clipped,
 * so a person can tell which call repeats.
 */
export function describeCall(seen: SeenCall, shownArguments = 2): string {
  const shown = Object.entries(seen.args)
    .slice(0, shownArguments)
    .map(([key, value]) => `${key === '_' ? '' : `${key} `}${clip(JSON.stringify(value) ?? '', 60)}`);
  return shown.length ? `${seen.call.name} with ${shown.join(', ')}` : seen.call.name;
}

/** Text on one line, at most `max` characters, with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
