import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkClaims, citedLocations, claimedFileWrites, claimsCorrection } from '../../../src/agent/guards/claims.js';
import { filesWrittenThisTurn } from '../../../src/agent/guards/turn-writes.js';
import type { ChatMessage } from '../../../src/llm/types.js';

describe('claimedFileWrites', () => {
  it('finds files the answer says it wrote or changed', () => {
    expect(claimedFileWrites("I've updated `src/app.ts` and saved notes.md.")).toEqual(['src/app.ts', 'notes.md']);
    expect(claimedFileWrites('Saved the report to reports/q3.md.')).toEqual(['reports/q3.md']);
    expect(claimedFileWrites('Created file `a.json` with the settings.')).toEqual(['a.json']);
    expect(claimedFileWrites('Done: notes.md has been written.')).toEqual(['notes.md']);
    expect(claimedFileWrites('I wrote ./todo/list.txt for you.')).toEqual(['todo/list.txt']);
  });

  it('ignores offers, conditions, the future, negations, questions and code', () => {
    expect(claimedFileWrites('You can write to notes.txt whenever you like.')).toEqual([]);
    expect(claimedFileWrites('If you change a.ts, restart the bot.')).toEqual([]);
    expect(claimedFileWrites('I will write notes.md next.')).toEqual([]);
    expect(claimedFileWrites('I did not change config.yaml.')).toEqual([]);
    expect(claimedFileWrites('Shall I update README.md?')).toEqual([]);
    expect(claimedFileWrites('```sh\necho hi > I wrote out.txt\n```')).toEqual([]);
    expect(claimedFileWrites('I updated to version 2.4.1 of the guide.')).toEqual([]);
  });
});

describe('citedLocations', () => {
  it('finds path:line, path:line:col and path#L12, not URLs', () => {
    expect(citedLocations('See src/app.ts:42, lib/x.py:7:3 and docs/a.md#L12. Also https://example.com/a.ts:80 and http://host:8080/x.')).toEqual([
      { path: 'src/app.ts', line: 42 },
      { path: 'lib/x.py', line: 7 },
      { path: 'docs/a.md', line: 12 },
    ]);
  });
});

describe('checkClaims', () => {
  let workspace: string;
  beforeAll(() => {
    workspace = mkdtempSync(join(tmpdir(), 'pincer-claims-'));
    mkdirSync(join(workspace, 'src'));
    writeFileSync(join(workspace, 'src', 'app.ts'), Array.from({ length: 80 }, (_, i) => `// line ${i + 1}`).join('\n') + '\n');
  });
  afterAll(() => rmSync(workspace, { recursive: true, force: true }));

  it('flags a claimed write that no call of the turn made', async () => {
    const problems = await checkClaims('I wrote notes.md with your list.', { changed: new Set(), workspaceDir: workspace });
    expect(problems).toEqual(['you said you wrote or changed notes.md, but no tool call in this turn wrote it']);
    expect(claimsCorrection(problems)).toContain('- you said you wrote or changed notes.md');
  });

  it('accepts a claimed write the turn made', async () => {
    expect(await checkClaims('I wrote notes.md.', { changed: new Set(['notes.md']), workspaceDir: workspace })).toEqual([]);
  });

  it('cannot judge claimed writes after a shell ran', async () => {
    expect(await checkClaims('I wrote notes.md.', { changed: new Set(), workspaceDir: workspace, writesUnknown: true })).toEqual([]);
  });

  it('flags citations of lines or files that do not exist, and accepts real ones', async () => {
    expect(await checkClaims('The bug is at src/app.ts:40.', { changed: new Set(), workspaceDir: workspace })).toEqual([]);
    expect(await checkClaims('The bug is at src/app.ts:120.', { changed: new Set(), workspaceDir: workspace })).toEqual([
      'you cited src/app.ts:120, but src/app.ts has only 80 lines',
    ]);
    expect(await checkClaims('See src/gone.ts:3.', { changed: new Set(), workspaceDir: workspace })).toEqual([
      'you cited src/gone.ts:3, but src/gone.ts does not exist in the workspace',
    ]);
  });

  it('leaves paths outside the workspace and host:port alone', async () => {
    expect(await checkClaims('I wrote /etc/hosts. Also ../x.md:3 and example.com:443.', { changed: new Set(), workspaceDir: workspace })).toEqual([]);
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
