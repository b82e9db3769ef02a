/**
 * Tools used by the scenarios: one with side effects that asks first, one that
 * always asks, and a slow one that honours aborts. Each records its runs.
 */
import { z } from 'zod';
import type { Tool } from '../../src/tools/types.js';

/** What the scenario tools did, for assertions. */
export class ToolLog {
  readonly notes: string[] = [];
  readonly dangers: string[] = [];
  slowStarted = 0;
  slowAborted = 0;
  slowFinished = 0;
}

/** The scenario tools, writing into `log`. */
export function scenarioTools(log: ToolLog): Tool[] {
  const noteParams = z.object({ text: z.string() });
  const note: Tool<typeof noteParams> = {
    name: 'note_write',
    description: 'Saves a note.',
    parameters: noteParams,
    readOnly: false,
    requiresApproval: () => 'unlessAutoApproved',
    describe: (params) => `Save the note "${params.text}".`,
    async execute(params) {
      log.notes.push(params.text);
      return `saved note "${params.text}"`;
    },
  };
  const dangerParams = z.object({ target: z.string() });
  const danger: Tool<typeof dangerParams> = {
    name: 'danger',
    description: 'Does something that always needs approval.',
    parameters: dangerParams,
    readOnly: false,
    requiresApproval: () => 'always',
    async execute(params) {
      log.dangers.push(params.target);
      // `wait N`: a slow action, to watch its progress once approved.
      const wait = /^wait (\d+)$/.exec(params.target);
      if (wait) await new Promise((resolve) => setTimeout(resolve, Number(wait[1])));
      return `danger done on ${params.target}`;
    },
  };
  const slowParams = z.object({ ms: z.number() });
  const slow: Tool<typeof slowParams> = {
    name: 'slow',
    description: 'Waits a while.',
    parameters: slowParams,
    readOnly: true,
    requiresApproval: () => 'never',
    timeoutMs: 120_000,
    execute(params, ctx) {
      log.slowStarted += 1;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          log.slowFinished += 1;
          resolve(`waited ${params.ms} ms`);
        }, params.ms);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          log.slowAborted += 1;
          reject(new Error('aborted'));
        });
      });
    },
  };
  return [note, danger, slow] as unknown as Tool[];
}
