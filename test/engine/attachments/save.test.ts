import { mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { safeFileName, saveInWorkspace } from '../../../src/engine/attachments/save.js';

describe('safeFileName', () => {
  it.each([
    ['../../etc/passwd', undefined, 'passwd'],
    ['..\\..\\boot.ini', undefined, 'boot.ini'],
    ['.bashrc', undefined, 'bashrc'],
    ['..', undefined, 'file'],
    ['', 'png', 'file.png'],
    ['photo', 'jpg', 'photo.jpg'],
    ['report.pdf', 'pdf', 'report.pdf'],
    ['a\u0000b\u001b[31mc\nd.txt', undefined, 'ab[31mcd.txt'],
    ['evil\u202Etxt.exe', undefined, 'eviltxt.exe'],
    ['what?<is>this|:*".md', undefined, 'what__is_this____.md'],
    ['trailing dots...', undefined, 'trailing dots'],
  ])('%j -> %j', (name, ext, expected) => {
    expect(safeFileName(name, ext)).toBe(expected);
  });

  it('cuts long names, keeping the extension', () => {
    const name = safeFileName(`${'x'.repeat(300)}.csv`);
    expect([...name]).toHaveLength(100);
    expect(name.endsWith('.csv')).toBe(true);
  });
});

describe('saveInWorkspace', () => {
  it('saves under attachments/, and a clash with other bytes gets a numbered name', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'pincer-save-'));
    expect(await saveInWorkspace(workspace, 'notes.md', Buffer.from('one'))).toBe('attachments/notes.md');
    expect(await saveInWorkspace(workspace, 'notes.md', Buffer.from('two'))).toBe('attachments/notes (2).md');
    expect(await saveInWorkspace(workspace, 'notes.md', Buffer.from('three'))).toBe('attachments/notes (3).md');
    expect(readFileSync(join(workspace, 'attachments/notes (2).md'), 'utf8')).toBe('two');
  });

  it('the same bytes saved again (a turn run again) reuse their file', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'pincer-save-'));
    await saveInWorkspace(workspace, 'notes.md', Buffer.from('one'));
    expect(await saveInWorkspace(workspace, 'notes.md', Buffer.from('one'))).toBe('attachments/notes.md');
  });

  it('never writes through a link: not where the folder is, not where the file would be', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'pincer-save-'));
    const outside = mkdtempSync(join(tmpdir(), 'pincer-outside-'));
    symlinkSync(outside, join(workspace, 'attachments'));
    await expect(saveInWorkspace(workspace, 'x.txt', Buffer.from('x'))).rejects.toThrow(/not a folder/);
    const other = mkdtempSync(join(tmpdir(), 'pincer-save-'));
    mkdirSync(join(other, 'attachments'));
    symlinkSync(join(outside, 'target.txt'), join(other, 'attachments', 'x.txt'));
    expect(await saveInWorkspace(other, 'x.txt', Buffer.from('x'))).toBe('attachments/x (2).txt');
  });
});
