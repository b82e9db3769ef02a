/**
 * files_send through the real pipeline: the workspace rules of files_read,
 * the platform's size limits checked before anyone is asked, a prompt that
 * names the file and its size, and an approved call that sends exactly the
 * bytes shown (to an outlet that records what it is given).
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { filesSendTool } from '../../../src/tools/builtin/files-send.js';
import type { WorkspaceSettings } from '../../../src/tools/builtin/lib/workspaces.js';
import type { FileOutlet, FileSendOutcome, FileToSend, ToolContext } from '../../../src/tools/types.js';
import { minimalPdf } from '../../support/pdf.js';
import { sha256Of, TINY_PNG } from '../../support/sent-files.js';
import { group, makeContext, makeHarness, OWN_WORKSPACE, tempDir, workspacesAt, type Harness } from '../support.js';

/** An outlet that keeps what it is given, answering `next` (sent, by default). */
class RecordingOutlet implements FileOutlet {
  readonly channel = 'telegram';
  readonly sent: { file: FileToSend; key: string }[] = [];
  next: FileSendOutcome = { ok: true, before: false };
  constructor(
    readonly limits: FileOutlet['limits'] = { photoBytes: 10_000, documentBytes: 50_000 },
    readonly maxBytes = 20_000,
  ) {}
  async send(file: FileToSend, key: string): Promise<FileSendOutcome> {
    this.sent.push({ file, key });
    return this.next;
  }
}

let root: string;
let workspace: string;
let workspaces: WorkspaceSettings;
let cleanup: () => void;
let h: Harness;
let outlet: RecordingOutlet;

beforeEach(async () => {
  const temp = tempDir('pincer-send-');
  root = temp.dir;
  cleanup = temp.cleanup;
  workspaces = workspacesAt(join(root, 'workspace'));
  workspace = join(workspaces.root, OWN_WORKSPACE);
  mkdirSync(join(workspace, 'out'), { recursive: true });
  mkdirSync(join(root, 'outside'));
  writeFileSync(join(workspace, 'out', 'chart.png'), TINY_PNG);
  writeFileSync(join(workspace, 'out', 'report.pdf'), minimalPdf(['Quarterly report']));
  writeFileSync(join(workspace, 'notes.txt'), 'plain notes\n');
  writeFileSync(join(workspace, 'big.bin'), Buffer.alloc(30_000, 1));
  writeFileSync(join(root, 'outside', 'secret.txt'), 'top secret');
  symlinkSync(join(root, 'outside', 'secret.txt'), join(workspace, 'leak.txt'));
  outlet = new RecordingOutlet();
  h = await makeHarness([filesSendTool(workspaces)]);
});
afterEach(async () => {
  await h.close();
  cleanup();
});

const ctx = (overrides: Partial<ToolContext> = {}) => makeContext({ outlet, ...overrides });
const call = (args: Record<string, unknown>, id = 'c1') => ({ id, name: 'files_send', arguments: JSON.stringify(args) });

describe('files_send: what is refused before anyone is asked', () => {
  it.each([
    ['../outside/secret.txt', '"../outside/secret.txt" leaves the workspace ("..") and is refused.'],
    ['leak.txt', '"leak.txt" resolves outside the workspace (through a symlink) and is refused.'],
    ['/etc/passwd', '"/etc/passwd" is an absolute path; use a path relative to the workspace.'],
  ])('a path outside the workspace: %s', async (path, message) => {
    const result = await h.pipeline.run(call({ path }), ctx());
    expect(result.status).toBe('rejected');
    expect(result.content).toContain(message);
    expect(outlet.sent).toEqual([]);
  });

  it('a folder', async () => {
    const result = await h.pipeline.run(call({ path: 'out' }), ctx());
    expect(result.status).toBe('rejected');
    expect(result.content).toContain('"out" is not a regular file.');
  });

  it('a missing file', async () => {
    const result = await h.pipeline.run(call({ path: 'out/missing.pdf' }), ctx());
    expect(result.status).toBe('rejected');
    expect(result.content).toContain('"out/missing.pdf" does not exist in the workspace.');
  });

  it('a file over the platform limit, and one over attachments.maxBytes, each saying which', async () => {
    outlet = new RecordingOutlet({ photoBytes: 10_000, documentBytes: 20_000 }, 100_000);
    const platform = await h.pipeline.run(call({ path: 'big.bin' }), ctx());
    expect(platform.status).toBe('rejected');
    expect(platform.content).toContain('big.bin is 29.3 KB, over the 19.5 KB that telegram takes from a bot');
    outlet = new RecordingOutlet({ photoBytes: 10_000, documentBytes: 1_000_000 }, 25_000);
    const configured = await h.pipeline.run(call({ path: 'big.bin' }), ctx());
    expect(configured.content).toContain('big.bin is 29.3 KB, over the 24.4 KB the bot sends at most (attachments.maxBytes)');
    expect(outlet.sent).toEqual([]);
  });

  it('in a group: refused like every tool that needs approval, nothing sent', async () => {
    const result = await h.pipeline.run(call({ path: 'out/chart.png' }), ctx({ approval: group }));
    expect(result.status).toBe('rejected');
    expect(result.content).toMatch(/approval/i);
    expect(outlet.sent).toEqual([]);
  });

  it('where there is no conversation to send to (a background job)', async () => {
    const result = await h.pipeline.run(call({ path: 'out/chart.png' }), makeContext());
    expect(result.content).toContain('files can only be sent in a conversation');
  });
});

describe('files_send: asking, and sending what was shown', () => {
  it('asks with the file name and size, and runs pinned to those bytes', async () => {
    const asked = await h.pipeline.run(call({ path: 'out/report.pdf', caption: 'Q3' }), ctx());
    expect(asked.status).toBe('needs_approval');
    const size = minimalPdf(['Quarterly report']).length;
    expect(asked.approval?.summary).toBe(`Send report.pdf (${size} bytes) to this conversation with the caption "Q3"`);
    expect(asked.approval?.allowAlways).toBe(true);
    expect(JSON.parse(asked.call.arguments)).toMatchObject({ path: 'out/report.pdf', approved: { bytes: size, sha256: sha256Of(minimalPdf(['Quarterly report'])) } });
    expect(outlet.sent).toEqual([]);

    const ran = await h.pipeline.run(asked.call, ctx(), { approved: true });
    expect(ran.content).toContain('Sent out/report.pdf');
    expect(outlet.sent).toHaveLength(1);
    const { file } = outlet.sent[0]!;
    expect(file).toMatchObject({ name: 'report.pdf', mimeType: 'application/pdf', as: 'document', caption: 'Q3' });
    expect(sha256Of(file.bytes)).toBe(sha256Of(minimalPdf(['Quarterly report'])));
  });

  it('sends an image as a photo, text as a document, and a photo too big for a photo as a document', async () => {
    await h.permissions.set('telegram:1', 'files_send', 'alwaysAllow');
    await h.pipeline.run(call({ path: 'out/chart.png' }), ctx());
    await h.pipeline.run(call({ path: 'notes.txt' }), ctx());
    outlet.limits!.photoBytes = 10;
    await h.pipeline.run(call({ path: 'out/chart.png' }), ctx());
    expect(outlet.sent.map(({ file }) => [file.name, file.mimeType, file.as])).toEqual([
      ['chart.png', 'image/png', 'photo'],
      ['notes.txt', 'text/plain', 'document'],
      ['chart.png', 'image/png', 'document'],
    ]);
  });

  it('a link inside the workspace is followed, and the file goes under the name the prompt showed', async () => {
    symlinkSync(join(workspace, 'out', 'chart.png'), join(workspace, 'latest.png'));
    const asked = await h.pipeline.run(call({ path: 'latest.png' }), ctx());
    expect(asked.approval?.summary).toBe(`Send latest.png (${TINY_PNG.length} bytes) to this conversation`);
    await h.pipeline.run(asked.call, ctx(), { approved: true });
    expect(outlet.sent.map(({ file }) => [file.name, file.as, sha256Of(file.bytes)])).toEqual([['latest.png', 'photo', sha256Of(TINY_PNG)]]);
  });

  it('a file changed after the prompt is not sent', async () => {
    const asked = await h.pipeline.run(call({ path: 'notes.txt' }), ctx());
    writeFileSync(join(workspace, 'notes.txt'), 'something else entirely\n');
    const ran = await h.pipeline.run(asked.call, ctx(), { approved: true });
    expect(ran.status).toBe('error');
    expect(ran.content).toContain('notes.txt changed after the person was asked to send it (12 bytes then, 24 bytes now); nothing was sent.');
    expect(outlet.sent).toEqual([]);
  });

  it('the same file and caption have the same key; another caption is another message', async () => {
    await h.permissions.set('telegram:1', 'files_send', 'alwaysAllow');
    await h.pipeline.run(call({ path: 'notes.txt' }), ctx());
    await h.pipeline.run(call({ path: 'notes.txt' }), ctx());
    await h.pipeline.run(call({ path: 'notes.txt', caption: 'again' }), ctx());
    const [first, second, third] = outlet.sent.map((sent) => sent.key);
    expect(first).toBe(second);
    expect(third).not.toBe(first);
  });

  it('tells the model when the outlet says it went out before, or may have', async () => {
    await h.permissions.set('telegram:1', 'files_send', 'alwaysAllow');
    outlet.next = { ok: true, before: true };
    expect((await h.pipeline.run(call({ path: 'notes.txt' }), ctx())).content).toContain('had already been sent to this conversation in this turn (by an earlier call, or before a restart); it was not sent again');
    outlet.next = { ok: false, reason: 'uncertain', detail: 'cut short' };
    expect((await h.pipeline.run(call({ path: 'notes.txt' }), ctx())).content).toContain('may have it already; it was not sent again, so that it does not arrive twice');
    outlet.next = { ok: false, reason: 'refused', detail: 'sendDocument failed: 413 Request Entity Too Large' };
    expect((await h.pipeline.run(call({ path: 'notes.txt' }), ctx())).content).toContain('telegram refused notes.txt: sendDocument failed: 413 Request Entity Too Large. Nothing was sent.');
  });
});
