/**
 * The loop detectors of seeds 002 and 004 behind one object: similar calls,
 * the same call again within a window, cycles, and failures in a row. The loop
 * shows it each batch of calls; it answers with the reaction the ladder calls
 * for: nothing, a note to the model, or escalation (ask the person, or stop).
 *
 * Its history is bounded (the window and two cycles' worth of calls), so the
 * cost of a batch does not grow with the length of the conversation.
 */
import { argumentAgreement, argumentsOf, comparable } from './call-similarity.js';

/** One tool call as the detectors see it. */
export interface ObservedCall {
  name: string;
  /** Arguments as the model sent them (JSON text). */
  arguments: string;
  ok: boolean;
  /** A short error for a failed call, for the summary. */
  error?: string;
}

/** Thresholds of the detectors (config `agent.loopGuards`). */
export interface LoopDetectorConfig {
  /** Share of argument keys that must agree for two calls of a tool to be similar. */
  similarity: number;
  /** Similar calls in a row that make a loop; the model is told at one fewer. */
  similarCallLimit: number;
  /** Calls looked back over for the same call again. */
  windowSize: number;
  /** The same call this many times within the window makes a loop. */
  windowRepeats: number;
  /** The longest cycle looked for (the last k calls equal to the k before them, k from 2). */
  maxCycleLength: number;
  /** Failing calls in a row that make a loop. */
  consecutiveFailures: number;
}

/** What a detector found. */
export interface LoopFinding {
  detector: 'similar' | 'window' | 'cycle' | 'failures';
  /** `warn`: one before the limit (similar calls only); `limit`: a loop. */
  level: 'warn' | 'limit';
  /** In plain words, for the model and for a person. */
  summary: string;
}

/** What the loop should do after a batch. */
export type LoopVerdict =
  | { action: 'none' }
  | { action: 'note'; finding: LoopFinding; message: string }
  | { action: 'escalate'; finding: LoopFinding };

/** A call kept in the history, with its comparable forms computed once. */
interface Seen {
  call: ObservedCall;
  /** Name and canonical arguments: equal for the same call. */
  key: string;
  args: Record<string, unknown>;
}

const NONE: LoopVerdict = { action: 'none' };

/** Watches the calls of one run of the loop; see the module comment. */
export class LoopDetector {
  private history: Seen[] = [];
  private similarRun = 0;
  private failuresInARow = 0;
  private warned = false;
  private noted = false;

  constructor(private readonly config: LoopDetectorConfig) {}

  /** Records one batch (calls in order) and says what to do. */
  observe(calls: readonly ObservedCall[]): LoopVerdict {
    let worst: LoopFinding | undefined;
    for (const call of calls) {
      const finding = this.record(call);
      if (finding && (!worst || (finding.level === 'limit' && worst.level === 'warn'))) worst = finding;
    }
    if (!worst) return NONE;
    if (worst.level === 'warn') {
      if (this.warned || this.noted) return NONE;
      this.warned = true;
      return { action: 'note', finding: worst, message: loopNote(worst) };
    }
    if (this.noted) return { action: 'escalate', finding: worst };
    this.noted = true;
    return { action: 'note', finding: worst, message: loopNote(worst) };
  }

  /**
   * Forgets every call and the notes given (after the person chose Continue or
   * Try another way). A text reply does not reset it: a model that talks
   * between the same calls is still going in circles.
   */
  reset(): void {
    this.history = [];
    this.similarRun = 0;
    this.failuresInARow = 0;
    this.warned = false;
    this.noted = false;
  }

  private record(call: ObservedCall): LoopFinding | undefined {
    const args = argumentsOf(call.arguments);
    const seen: Seen = { call, key: `${call.name}(${comparable(args)})`, args };
    const previous = this.history[this.history.length - 1];
    this.similarRun = previous && this.similar(previous, seen) ? this.similarRun + 1 : 1;
    this.failuresInARow = call.ok ? 0 : this.failuresInARow + 1;
    this.history.push(seen);
    const keep = Math.max(this.config.windowSize, 2 * this.config.maxCycleLength);
    if (this.history.length > keep) this.history.splice(0, this.history.length - keep);
    return this.failures(call) ?? this.similarCalls(seen) ?? this.cycle() ?? this.window(seen) ?? this.similarWarning(seen);
  }

  private similar(a: Seen, b: Seen): boolean {
    return a.call.name === b.call.name && (a.key === b.key || argumentAgreement(a.args, b.args) >= this.config.similarity);
  }

  private failures(call: ObservedCall): LoopFinding | undefined {
    if (this.failuresInARow < this.config.consecutiveFailures) return undefined;
    const last = call.error ? ` (last: ${call.name}: ${clip(call.error, 80)})` : ` (last: ${call.name})`;
    return { detector: 'failures', level: 'limit', summary: `${this.failuresInARow} failing tool calls in a row${last}.` };
  }

  private similarCalls(seen: Seen): LoopFinding | undefined {
    if (this.similarRun < this.config.similarCallLimit) return undefined;
    return { detector: 'similar', level: 'limit', summary: `${describeCall(seen.call)}, ${this.similarRun} times in a row with the same or nearly the same arguments.` };
  }

  private similarWarning(seen: Seen): LoopFinding | undefined {
    if (this.similarRun !== this.config.similarCallLimit - 1 || this.similarRun < 2) return undefined;
    return { detector: 'similar', level: 'warn', summary: `${describeCall(seen.call)}, ${this.similarRun} times in a row with the same or nearly the same arguments.` };
  }

  /** The last k calls equal the k before them, for k from 2 to maxCycleLength. */
  private cycle(): LoopFinding | undefined {
    const calls = this.history;
    for (let k = 2; k <= this.config.maxCycleLength && 2 * k <= calls.length; k++) {
      const end = calls.length;
      let equal = true;
      for (let i = 0; i < k && equal; i++) equal = calls[end - 1 - i]!.key === calls[end - 1 - k - i]!.key;
      // A "cycle" of one call repeated (A,A,A,A) is the similar-calls detector's.
      if (equal && new Set(calls.slice(end - k).map((seen) => seen.key)).size > 1) {
        const names = calls.slice(end - k).map((seen) => seen.call.name).join(' → ');
        return { detector: 'cycle', level: 'limit', summary: `the same ${k} calls again in the same order (${names}), twice in a row.` };
      }
    }
    return undefined;
  }

  private window(seen: Seen): LoopFinding | undefined {
    const recent = this.history.slice(-this.config.windowSize);
    const times = recent.filter((other) => other.key === seen.key).length;
    if (times < this.config.windowRepeats) return undefined;
    return { detector: 'window', level: 'limit', summary: `${describeCall(seen.call)}, ${times} times within the last ${recent.length} calls.` };
  }
}

/** The note to the model when a detector fires. */
export function loopNote(finding: LoopFinding): string {
  const lead = finding.level === 'warn' ? 'You are starting to repeat yourself' : 'You are going in circles';
  return `${lead}: ${finding.summary} Repeating it will not give a different result. Use what you already have, change your approach, or tell the user what is blocking you.`;
}

/** `files_read with path "a.txt"`: the tool and its first argument or two, clipped. */
function describeCall(call: ObservedCall): string {
  const args = argumentsOf(call.arguments);
  const shown = Object.entries(args)
    .slice(0, 2)
    .map(([key, value]) => `${key === '_' ? '' : `${key} `}${clip(typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value) ?? '', 60)}`);
  return shown.length ? `${call.name} with ${shown.join(', ')}` : call.name;
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
