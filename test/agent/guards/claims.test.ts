import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkClaims, citedLocations, claimedFileWrites, claimsCorrection } from '../../../src/engine/guards/claims.js';
import { filesWrittenThisTurn } from '../../../src/engine/guards/turn-writes.js';
import type { ChatMessage } from '../../../src/llm/types.js';

describe('claimedFileWrites', () => {
  it('finds files the answer says it wrote or changed', () => {
    expect(claimedFileWrites('I wrote notes.txt with your list.')).toEqual(['notes.txt']);
    expect(claimedFileWrites("I've updated `src/app.ts` and saved notes.md.")).toEqual(['src/app.ts', 'notes.md']);
    expect(claimedFileWrites('Saved the report to reports/q3.md.')).toEqual(['reports/q3.md']);
    expect(claimedFileWrites('Created file `a.json` with the settings.')).toEqual(['a.json']);
    expect(claimedFileWrites('Done: notes.md has been written.')).toEqual(['notes.md']);
    expect(claimedFileWrites('I wrote ./todo/list.txt for you.')).toEqual(['todo/list.txt']);
    expect(claimedFileWrites('I have just fixed the typo in "docs/guide.md".')).toEqual(['docs/guide.md']);
    expect(claimedFileWrites('I edited a.ts, b.ts and c/d.py as asked.')).toEqual(['a.ts', 'b.ts', 'c/d.py']);
  });

  it('finds a claim after another verb or clause of mine', () => {
    expect(claimedFileWrites('I read config.yaml and updated src/app.ts to match it.')).toEqual(['src/app.ts']);
    expect(claimedFileWrites('The tests did not run, but I fixed src/a.ts anyway.')).toEqual(['src/a.ts']);
    expect(claimedFileWrites('I wrote notes.md so you can review it later.')).toEqual(['notes.md']);
  });

  it('finds claims in a list of changes', () => {
    const text = 'Changes:\n- Updated `src/app.ts` to read the new key.\n2. Created tests/app.test.ts\n* **Fixed** the import in lib/util.ts\n- Left README.md as it was';
    expect(claimedFileWrites(text)).toEqual(['src/app.ts', 'tests/app.test.ts', 'lib/util.ts']);
  });

  it('keeps absolute paths as written', () => {
    expect(claimedFileWrites('I saved /srv/work/out.txt.')).toEqual(['/srv/work/out.txt']);
  });

  it('ignores offers, conditions, the future, negations and questions', () => {
    expect(claimedFileWrites('You can write to notes.txt whenever you like.')).toEqual([]);
    expect(claimedFileWrites('If you change a.ts, restart the bot.')).toEqual([]);
    expect(claimedFileWrites('If you changed a.ts, restart the bot.')).toEqual([]);
    expect(claimedFileWrites('I will write notes.md next.')).toEqual([]);
    expect(claimedFileWrites("I'll update notes.md once you confirm.")).toEqual([]);
    expect(claimedFileWrites('I did not change config.yaml.')).toEqual([]);
    expect(claimedFileWrites("I haven't changed config.yaml.")).toEqual([]);
    expect(claimedFileWrites('I have not updated config.yaml yet.')).toEqual([]);
    expect(claimedFileWrites('config.yaml was not changed.')).toEqual([]);
    expect(claimedFileWrites('Shall I update README.md?')).toEqual([]);
    expect(claimedFileWrites('Have I updated README.md?')).toEqual([]);
  });

  it('ignores sources, earlier turns, other subjects, code blocks and version numbers', () => {
    expect(claimedFileWrites('I updated the settings from defaults.yaml.')).toEqual([]);
    expect(claimedFileWrites('I fixed the crash described in issue.md; see logs/error.log for the trace.')).toEqual([]);
    expect(claimedFileWrites('I updated notes.md earlier, so it is current.')).toEqual([]);
    expect(claimedFileWrites('The build read a.json and created out.log.')).toEqual([]);
    expect(claimedFileWrites('```sh\necho hi > out.txt\nI wrote out.txt\n```')).toEqual([]);
    expect(claimedFileWrites('I updated to version 2.4.1 of the guide.')).toEqual([]);
  });
});

describe('citedLocations', () => {
  it('finds path:line, path:line:col, ranges and path#L12, not URLs or times', () => {
    const text = 'See src/app.ts:42, lib/x.py:7:3, docs/a.md#L12, b.ts:3-9 and c.md#L2-L5. Also https://example.com/a.ts:80, http://host:8080/x and 10:30.';
    expect(citedLocations(text)).toEqual([
      { path: 'src/app.ts', line: 42 },
      { path: 'lib/x.py', line: 7 },
      { path: 'docs/a.md', line: 12 },
      { path: 'b.ts', line: 9 },
      { path: 'c.md', line: 5 },
    ]);
  });

  it('normalises the paths and strips quotes', () => {
    expect(citedLocations('At `./src/app.ts:4` and "/abs/f.ts:2".')).toEqual([
      { path: 'src/app.ts', line: 4 },
      { path: '/abs/f.ts', line: 2 },
    ]);
  });
});

describe('checkClaims', () => {
  let workspace: string;
  let outside: string;
  beforeAll(() => {
    workspace = mkdtempSync(join(tmpdir(), 'pincer-claims-'));
    outside = mkdtempSync(join(tmpdir(), 'pincer-outside-'));
    mkdirSync(join(workspace, 'src'));
    writeFileSync(join(workspace, 'src', 'app.ts'), Array.from({ length: 80 }, (_, i) => `// line ${i + 1}`).join('\n') + '\n');
    writeFileSync(join(workspace, 'empty.md'), '');
    writeFileSync(join(outside, 'secret.txt'), 'one\n');
    symlinkSync(join(outside, 'secret.txt'), join(workspace, 'link.txt'));
  });
  afterAll(() => {
    rmSync(workspace, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  const none = new Set<string>();

  it('flags a claimed write that no call of the turn made', async () => {
    expect(await checkClaims('I wrote notes.md with your list.', none, workspace)).toEqual([
      'you said you wrote or changed notes.md, but no tool call in this turn wrote it',
    ]);
  });

  it('accepts a claimed write the turn made, however the path is written', async () => {
    expect(await checkClaims('I wrote ./notes.md.', new Set(['notes.md']), workspace)).toEqual([]);
    expect(await checkClaims(`I saved ${join(workspace, 'src', 'new.ts')}.`, new Set(['src/new.ts']), workspace)).toEqual([]);
    expect(await checkClaims('I updated src/utils as asked.', new Set(['./src/utils/a.ts']), workspace)).toEqual([]);
  });

  it('checks an absolute path inside the workspace as the relative one', async () => {
    expect(await checkClaims(`I saved ${join(workspace, 'src', 'new.ts')}.`, none, workspace)).toEqual([
      'you said you wrote or changed src/new.ts, but no tool call in this turn wrote it',
    ]);
  });

  it('knows the workspace by its configured path and by its real path', async () => {
    const alias = join(outside, 'alias');
    symlinkSync(workspace, alias);
    expect(await checkClaims(`I saved ${join(alias, 'a.md')} and ${join(workspace, 'b.md')}.`, new Set(['a.md']), alias)).toEqual([
      'you said you wrote or changed b.md, but no tool call in this turn wrote it',
    ]);
  });

  it('cannot judge claimed writes after a tool that changes files without saying which', async () => {
    expect(await checkClaims('I wrote notes.md.', none, workspace, { writesUnknown: true })).toEqual([]);
  });

  it('accepts a claimed write the turn made, and cannot judge one after a shell', async () => {
    expect(await checkClaims('I wrote notes.md.', none, workspace, { writesUnknown: true })).toEqual([]);
    expect(await checkClaims('I wrote notes.md.', new Set(['notes.md']), workspace)).toEqual([]);
  });

  it('accepts citations of lines that exist', async () => {
    expect(await checkClaims('The bug is at src/app.ts:40 (see src/app.ts#L1-L80).', none, workspace)).toEqual([]);
  });

  it('flags citations of lines or files that do not exist', async () => {
    expect(await checkClaims('The bug is at src/app.ts:120.', none, workspace)).toEqual(['src/app.ts:120 does not exist: src/app.ts has 80 lines']);
    expect(await checkClaims('See src/app.ts:70-90.', none, workspace)).toEqual(['src/app.ts:90 does not exist: src/app.ts has 80 lines']);
    expect(await checkClaims('See src/gone.ts:3 and docs/y.md:1.', none, workspace)).toEqual([
      'src/gone.ts:3 does not exist: there is no src/gone.ts in the workspace',
      'docs/y.md:1 does not exist: there is no docs/y.md in the workspace',
    ]);
    expect(await checkClaims('It starts at empty.md:1.', none, workspace)).toEqual(['empty.md:1 does not exist: empty.md is empty']);
  });

  it('reports each problem once', async () => {
    expect(await checkClaims('I wrote a.md. Yes, I wrote a.md. See src/app.ts:99 and src/app.ts:99.', none, workspace)).toHaveLength(2);
  });

  it('leaves paths outside the workspace, symlinks leading out and host:port alone', async () => {
    const text = `I wrote /etc/hosts and ${join(outside, 'x.md')}. Also ../x.md:3, /etc/passwd:900, link.txt:5 and example.com:443.`;
    expect(await checkClaims(text, none, workspace)).toEqual([]);
  });

  it('finds nothing wrong in an answer without claims', async () => {
    expect(await checkClaims('The weather in Paris is mild today.', none, workspace)).toEqual([]);
  });
});

describe('claimsCorrection', () => {
  it('lists the problems and asks for an honest answer', () => {
    const message = claimsCorrection(['you said you wrote or changed notes.md, but no tool call in this turn wrote it', 'src/a.ts:9 does not exist: src/a.ts has 3 lines']);
    expect(message).toContain('- you said you wrote or changed notes.md, but no tool call in this turn wrote it.');
    expect(message).toContain('- src/a.ts:9 does not exist: src/a.ts has 3 lines.');
    expect(message).toMatch(/only states what the tool results show/);
  });
});

describe('filesWrittenThisTurn', () => {
  const write = (id: string, path: string): ChatMessage => ({ role: 'assistant', content: null, toolCalls: [{ id, name: 'files_write', arguments: JSON.stringify({ path, content: 'x' }) }] });

  it('collects successful writes since the last answer', () => {
    const messages: ChatMessage[] = [
      write('old', 'earlier.md'),
      { role: 'tool', toolCallId: 'old', content: 'Wrote 1 bytes to earlier.md.' },
      { role: 'assistant', content: 'Done earlier.' },
      { role: 'user', content: 'again' },
      write('a', './notes.md'),
      { role: 'tool', toolCallId: 'a', content: '<tool_output tool="files_write">\nnotice\nWrote 1 bytes to notes.md.\n</tool_output>' },
      write('b', 'fail.md'),
      { role: 'tool', toolCallId: 'b', content: 'Error: the path is outside the workspace' },
    ];
    expect(filesWrittenThisTurn(messages)).toEqual({ files: new Set(['notes.md']), opaque: false });
  });
});
