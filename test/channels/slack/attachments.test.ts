/**
 * Files shared on Slack, through Bolt and the fake Slack: the message event
 * carries each file's id and `url_private`; the download sends the bot token
 * as a bearer header to Slack only (a redirect to another host goes without
 * it), and Slack's sign-in page, answered to an app without `files:read`, is
 * not taken for the file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../../src/channels/types.js';
import { slackFileHost } from '../../../src/channels/slack/adapter.js';
import { AttachmentFetchError } from '../../../src/errors.js';
import { MANIFEST_SCOPES, startFakeSlack } from '../../fakes/slack/index.js';
import { ALICE, DM_ALICE, populate, startHarness, type Harness } from './harness.js';

const NOTES = { name: 'notes.md', mimetype: 'text/markdown', bytes: Buffer.from('# Notes\nThe word is pelican.\n') };
const LIMITS = () => ({ maxBytes: 1024 * 1024, signal: AbortSignal.timeout(5_000) });

describe('slack attachments', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  /** Alice shares notes.md in her DM; the message the channel delivers. */
  const share = async (h: Harness): Promise<InboundMessage> => {
    await h.fake.sendMessage({ channel: DM_ALICE, user: ALICE.id, text: 'my notes', files: [NOTES] });
    const [event] = (await h.recorder.waitFor(1)) as InboundMessage[];
    return event!;
  };

  it('delivers the file id and url_private, and downloads with the bot token as a bearer header', async () => {
    harness = await startHarness();
    const event = await share(harness);
    const [attachment] = event.attachments;
    expect(attachment).toMatchObject({ kind: 'document', name: 'notes.md', mimeType: 'text/markdown', sizeBytes: NOTES.bytes.length, fileId: expect.stringMatching(/^F0/) });
    expect(attachment!.url).toMatch(/\/files-pri\//);
    const bytes = await harness.channel.fetchAttachment(attachment!, LIMITS());
    expect(Buffer.from(bytes).toString()).toBe(NOTES.bytes.toString());
    expect(harness.fake.files.downloads).toEqual([{ host: 'slack', path: expect.any(String), authorization: `Bearer ${harness.fake.botToken}` }]);
  });

  it('follows a redirect to another host without the bearer header', async () => {
    harness = await startHarness();
    const event = await share(harness);
    harness.fake.files.redirectElsewhere(event.attachments[0]!.fileId!);
    const bytes = await harness.channel.fetchAttachment(event.attachments[0]!, LIMITS());
    expect(Buffer.from(bytes).toString()).toContain('pelican');
    const [toSlack, elsewhere] = harness.fake.files.downloads;
    expect(toSlack).toMatchObject({ host: 'slack', authorization: `Bearer ${harness.fake.botToken}` });
    expect(elsewhere).toEqual({ host: 'elsewhere', path: expect.any(String) });
  });

  it('never sends the bot token to an address that is not Slack’s', async () => {
    harness = await startHarness();
    const event = await share(harness);
    const elsewhere = { ...event.attachments[0]!, url: 'http://127.0.0.2:9/files-pri/T1-F1/notes.md' };
    const failure = await harness.channel.fetchAttachment(elsewhere, LIMITS()).catch((error: unknown) => error);
    expect(failure).toMatchObject({ reason: 'failed', message: 'the file is not on a Slack address' });
    expect(harness.fake.files.downloads).toEqual([]);
    expect(slackFileHost('https://files.slack.com/files-pri/T1-F1/a.png', undefined)).toBe(true);
    expect(slackFileHost('http://files.slack.com/files-pri/T1-F1/a.png', undefined)).toBe(false);
    expect(slackFileHost('https://files.slack.com.evil.example/a.png', undefined)).toBe(false);
    expect(slackFileHost('https://evilslack.com/a.png', undefined)).toBe(false);
  });

  it('refuses a file larger than the limit while it downloads', async () => {
    harness = await startHarness();
    const event = await share(harness);
    const failure = await harness.channel.fetchAttachment(event.attachments[0]!, { maxBytes: 10, signal: AbortSignal.timeout(5_000) }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AttachmentFetchError);
    expect(failure).toMatchObject({ reason: 'too-big', limitBytes: 10 });
  });

  it('without files:read, Slack answers its sign-in page: the download fails saying so, never taking the page for the file', async () => {
    const fake = await startFakeSlack({ scopes: MANIFEST_SCOPES.filter((scope) => scope !== 'files:read') });
    populate(fake);
    harness = await startHarness({}, {}, fake);
    const close = harness.close;
    harness.close = async () => {
      await close();
      await fake.close();
    };
    const event = await share(harness);
    const failure = await harness.channel.fetchAttachment(event.attachments[0]!, LIMITS()).catch((error: unknown) => error);
    expect(failure).toMatchObject({ reason: 'failed', message: expect.stringContaining('files:read') });
  });

  it('the manifest asks for files:read', () => {
    expect(MANIFEST_SCOPES).toContain('files:read');
  });
});
