import { describe, expect, it } from 'vitest';
import { interpretLine, offeredKeys, promptQuestion, type TypedLine } from '../../../src/channels/terminal/inbound.js';
import type { PromptAction } from '../../../src/channels/types.js';

const APPROVAL = { actions: ['approve', 'always', 'deny'] as PromptAction[] };
const ONCE = { actions: ['approve', 'deny'] as PromptAction[] };
const LOOP = { actions: ['continue', 'stop', 'redirect'] as PromptAction[] };

describe('interpretLine', () => {
  it.each<[string, { actions: PromptAction[] } | undefined, TypedLine]>([
    // No prompt waiting: everything is a message or a command.
    ['hello there', undefined, { kind: 'message', text: 'hello there' }],
    ['y', undefined, { kind: 'message', text: 'y' }],
    ['yy', undefined, { kind: 'message', text: 'yy' }],
    ['  ', undefined, { kind: 'empty' }],
    ['/Policy allow http_fetch', undefined, { kind: 'command', name: 'policy', args: 'allow http_fetch' }],
    ['/etc/hosts is odd', undefined, { kind: 'message', text: '/etc/hosts is odd' }],
    // A prompt waiting: its letters and words answer it.
    ['y', APPROVAL, { kind: 'answer', action: 'approve' }],
    [' YES ', APPROVAL, { kind: 'answer', action: 'approve' }],
    ['n', APPROVAL, { kind: 'answer', action: 'deny' }],
    ['always', APPROVAL, { kind: 'answer', action: 'always' }],
    ['a', ONCE, { kind: 'not-offered', action: 'always' }],
    ['t', LOOP, { kind: 'answer', action: 'redirect' }],
    // One word that is no choice is a typo: asked again.
    ['yy', APPROVAL, { kind: 'retry', text: 'yy' }],
    ['nope', APPROVAL, { kind: 'retry', text: 'nope' }],
    ['k', APPROVAL, { kind: 'retry', text: 'k' }],
    ['y', LOOP, { kind: 'retry', text: 'y' }],
    // A command still runs, and a sentence is the person moving on.
    ['/status', APPROVAL, { kind: 'command', name: 'status', args: '' }],
    ['no, use the other site', APPROVAL, { kind: 'message', text: 'no, use the other site' }],
    ['yes please', APPROVAL, { kind: 'message', text: 'yes please' }],
    ['', APPROVAL, { kind: 'empty' }],
  ])('reads %j (prompt: %j) as %j', (line, pending, expected) => {
    expect(interpretLine(line, pending)).toEqual(expected);
  });
});

describe('promptQuestion and offeredKeys', () => {
  it('ask the usual answer first and name the letters for a hint', () => {
    expect(promptQuestion(['deny', 'always', 'approve'])).toBe('Approve? [y]es / [n]o / [a]lways: ');
    expect(promptQuestion(LOOP.actions)).toBe('Your choice? [c]ontinue / [s]top / [t]ry another way: ');
    expect(offeredKeys(APPROVAL.actions)).toBe('y, n or a');
    expect(offeredKeys(['deny'])).toBe('n');
  });
});
