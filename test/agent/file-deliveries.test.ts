/**
 * A file sent through the outbox to the Telegram fake by the real channel
 * (grammY uploading multipart/form-data) goes out once: the same name again
 * posts nothing, a send a crash cut short is not tried again, and a refusal
 * (413) or a 429 is told apart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatAddress, OutboundFile } from '../../src/channels/types.js';
import { DeliveryLog } from '../../src/engine/deliveries.js';
import { Outbox } from '../../src/engine/outbox.js';
import { silentLogger } from '../../src/log.js';
import { Store } from '../../src/store/store.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { ALICE, startChannel, type Harness } from '../channels/telegram/helpers.js';
import { sha256Of, TINY_PNG } from '../support/sent-files.js';

const DM: ChatAddress = { channel: 'telegram', chatId: String(ALICE.id) };
const NAME = 'file:telegram:1001:1700000000000:abc';
const CHART: OutboundFile = { name: 'chart.png', bytes: TINY_PNG, mimeType: 'image/png', as: 'photo', caption: 'the chart' };

describe('sending a file once', () => {
  let fake: FakeTelegram;
  let harness: Harness;
  let dir: string;
  let store: Store;

  beforeEach(async () => {
    fake = await startFakeTelegram();
    harness = await startChannel(fake);
    dir = mkdtempSync(join(tmpdir(), 'pincer-file-deliveries-'));
    store = await Store.open({ url: `sqlite://${join(dir, 'pincer.sqlite')}` });
  });

  afterEach(async () => {
    await store.close();
    await harness.channel.stop();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const outbox = () => new Outbox(new Map([['telegram', harness.channel]]), (text) => text, silentLogger, undefined, new DeliveryLog(store, silentLogger));

  it('uploads a photo with its caption, and posts nothing when the same name is sent again (after a restart)', async () => {
    expect(await outbox().sendFile(DM, CHART, NAME)).toEqual({ ok: true, before: false });
    expect(fake.uploads).toMatchObject([{ method: 'sendPhoto', chatId: DM.chatId, name: 'chart.png', size: TINY_PNG.length, sha256: sha256Of(TINY_PNG), caption: 'the chart' }]);
    // A new process (a new outbox over the same store) reruns the turn.
    expect(await outbox().sendFile(DM, CHART, NAME)).toEqual({ ok: true, before: true });
    expect(fake.uploads).toHaveLength(1);
  });

  it('does not try again a send that a crash cut short during the platform call', async () => {
    // The first process put the start on record, then died before Telegram answered.
    await new DeliveryLog(store, silentLogger).begin(NAME);
    expect(await outbox().sendFile(DM, CHART, NAME)).toMatchObject({ ok: false, reason: 'uncertain' });
    expect(fake.calls.filter((call) => call.method === 'sendPhoto')).toHaveLength(0);
  });

  it('a 413 is a refusal the model can tell the person; the name stays free for a smaller file', async () => {
    fake.failNext('sendDocument', { error_code: 413, description: 'Request Entity Too Large' });
    const pdf: OutboundFile = { name: 'big.pdf', bytes: Buffer.from('%PDF-1.4 fake'), mimeType: 'application/pdf', as: 'document' };
    const refused = await outbox().sendFile(DM, pdf, NAME);
    expect(refused).toEqual({ ok: false, reason: 'refused', detail: 'sendDocument failed: sendDocument: 413 Request Entity Too Large' });
    expect(fake.uploads).toEqual([]);
    expect(await outbox().sendFile(DM, pdf, NAME)).toEqual({ ok: true, before: false });
    expect(fake.uploads.map((upload) => upload.method)).toEqual(['sendDocument']);
  });

  it('waits out a 429 and sends once', async () => {
    fake.failNext('sendPhoto', { error_code: 429, description: 'Too Many Requests: retry after 1', retry_after: 1 });
    expect(await outbox().sendFile(DM, CHART, NAME)).toEqual({ ok: true, before: false });
    expect(fake.calls.filter((call) => call.method === 'sendPhoto')).toHaveLength(2);
    expect(fake.uploads).toHaveLength(1);
  });

  it('an image Telegram will not take as a photo goes as a document', async () => {
    fake.failNext('sendPhoto', { error_code: 400, description: 'Bad Request: PHOTO_INVALID_DIMENSIONS' });
    expect(await outbox().sendFile(DM, CHART, NAME)).toEqual({ ok: true, before: false });
    expect(fake.uploads).toMatchObject([{ method: 'sendDocument', name: 'chart.png', sha256: sha256Of(TINY_PNG) }]);
  });
});
