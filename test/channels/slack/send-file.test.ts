/**
 * A file the bot shares on Slack (files.uploadV2 through @slack/web-api and the
 * fake): the upload URL gets the bytes, the completion shares the file in the
 * conversation's thread with its caption, and an app without `files:write`
 * is refused with a reason the model can tell the person.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { OutboundFile } from '../../../src/channels/types.js';
import { ChannelError } from '../../../src/errors.js';
import { MANIFEST_SCOPES, startFakeSlack } from '../../fakes/slack/index.js';
import { minimalPdf } from '../../support/pdf.js';
import { sha256Of } from '../../support/sent-files.js';
import { GENERAL, populate, startHarness, type Harness } from './harness.js';

const REPORT: OutboundFile = { name: 'report.pdf', bytes: minimalPdf(['Quarterly report']), mimeType: 'application/pdf', as: 'document', caption: 'The *Q3* report' };

describe('slack sendFile', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it('uploads the bytes and shares the file in the thread, the caption as its comment', async () => {
    harness = await startHarness();
    const sent = await harness.channel.sendFile(
      { channel: 'slack', chatId: GENERAL, subId: '1700000000.000100' },
      REPORT,
    );
    const [upload] = harness.fake.uploads.completed;
    expect(sent.ids).toEqual([upload!.fileId]);
    expect(upload).toMatchObject({ channel: GENERAL, threadTs: '1700000000.000100', name: 'report.pdf', size: REPORT.bytes.length, sha256: sha256Of(REPORT.bytes), filetype: 'pdf', caption: 'The _Q3_ report' });
    expect(harness.fake.calls.map((call) => call.method)).toEqual(expect.arrayContaining(['files.getUploadURLExternal', 'files.completeUploadExternal']));
  });

  it('without files:write, Slack answers missing_scope: a refusal, nothing shared', async () => {
    const fake = await startFakeSlack({ scopes: MANIFEST_SCOPES.filter((scope) => scope !== 'files:write') });
    populate(fake);
    harness = await startHarness({}, {}, fake);
    const failure = await harness.channel.sendFile({ channel: 'slack', chatId: GENERAL }, REPORT).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ChannelError);
    expect(failure).toMatchObject({ retryable: false, message: expect.stringContaining('missing_scope') });
    expect(fake.uploads.completed).toEqual([]);
  });

  it('the manifest asks for files:write', () => {
    expect(MANIFEST_SCOPES).toContain('files:write');
  });
});
