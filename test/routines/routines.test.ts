/**
 * Routines through the whole app: a reminder asked for in a DM arrives once;
 * also when the bot restarts between scheduling and firing; after downtime a
 * firing missed by 10 minutes runs once and one missed by a day is skipped
 * and recorded; two instances on one Redis store post it once.
 *
 * "Nothing more was posted" is read after a marker: a reminder due after the
 * one checked (or caught up after it at a start), fired by the same timers.
 * A duplicate would be due before the marker, so it would show by then.
 * Reminders asked for in the chat are due a few seconds later: the time is
 * chosen when the model is asked, and the approval has to come before it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { RoutineStore, type Routine } from '../../src/routines/routine.js';
import { Store } from '../../src/store/store.js';
import { startFakeLlm, textReply, toolCallReply, type FakeLlm, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { TestPlatform, testDm } from '../support/test-channel.js';
import { reminderRecord } from './records.js';

let rig: AppRig | undefined;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ada = { id: 'owner', name: 'Ada' };
const dm = testDm(ada.id);

/** "remind <text> in <seconds>" becomes a `schedule` call; after it, the model repeats the result. */
function model(request: FakeLlmRequest): FakeLlmEntry {
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return textReply(`scheduled: ${String(last.content).replace(/\s+/g, ' ')}`);
  const asked = /remind (.+) in ([\d.]+)s/.exec(String(last.content));
  if (!asked) return textReply('ok');
  const at = new Date(Date.now() + Number(asked[2]) * 1000).toISOString();
  return toolCallReply([{ name: 'schedule', arguments: { message: asked[1], at } }]);
}

/** How long after the request a reminder asked for in the chat is due: time enough to approve it on a slow machine. */
const LEAD_S = 3;

function reminders(platform: TestPlatform, text: string): string[] {
  return platform.messagesIn(dm).map((m) => m.text).filter((t) => t === `⏰ ${text}`);
}

async function approve(index: number): Promise<void> {
  const prompt = await rig!.platform.waitFor(() => rig!.platform.approvalsIn(dm)[index], 5_000, `approval prompt #${index + 1}`);
  expect(prompt.text).toMatch(/Schedule the reminder .* once, (today|tomorrow) at \d\d:\d\d UTC\. Next: (today|tomorrow) at/);
  rig!.platform.channel.press(prompt.prompt.id, 'approve', ada);
}

/** A reminder in Ada's DM, firing every day from `nextAt`. */
function reminder(id: string, text: string, nextAt: number): Routine {
  return reminderRecord(id, text, nextAt);
}

/** Arms a reminder due just after now, and waits until it is posted: whatever was due before it has fired by then. */
async function marker(app: App, platform: TestPlatform, id: string): Promise<void> {
  const at = Date.now() + 100;
  await app.routines.scheduler.add({ ...reminder(id, `marker ${id}`, at), schedule: { kind: 'at', at } });
  await platform.waitFor(() => reminders(platform, `marker ${id}`).length === 1, 10_000, `the marker ${id}`);
}

/** Stores a reminder missed a minute ago while the app is stopped: the next start catches it up after the routines stored before it. */
async function missedMarker(dir: string, id: string): Promise<void> {
  const store = await Store.open({ url: undefined, dataDir: dir, log: silentLogger });
  const at = Date.now() - 60_000;
  await new RoutineStore(store, silentLogger).create({ ...reminder(id, `marker ${id}`, at), schedule: { kind: 'at', at } });
  await store.close();
}

describe('routines', () => {
  it('a reminder asked for in a DM arrives once, at its time', async () => {
    rig = await startAppRig({ responder: model });
    rig.platform.channel.userMessage({ chat: dm, sender: ada, text: `remind stretch in ${LEAD_S}s` });
    await approve(0);
    await rig.platform.waitFor(() => rig!.platform.messagesIn(dm).some((m) => /scheduled: .*"id":"r\w+"/.test(m.text)), 5_000, 'the confirmation');
    await rig.platform.waitFor(() => reminders(rig!.platform, 'stretch').length === 1, LEAD_S * 1_000 + 5_000, 'the reminder');
    await marker(rig.app, rig.platform, 'rmarker01');
    expect(reminders(rig.platform, 'stretch')).toHaveLength(1);
    // Its firing was recorded before the marker's, which came later through the same timers.
    const routine = (await rig.app.services.routines.list()).find((entry) => entry.name === 'stretch');
    expect(routine).toMatchObject({ lastResult: 'reminder sent', owner: 'test:owner' });
    expect(routine!.nextAt).toBeUndefined();
  });

  it('arrives exactly once when the bot restarts between scheduling and firing', async () => {
    rig = await startAppRig({ responder: model });
    rig.platform.channel.userMessage({ chat: dm, sender: ada, text: `remind water in ${LEAD_S}s` });
    await approve(0);
    await rig.platform.waitFor(() => rig!.platform.messagesIn(dm).some((m) => /scheduled:/.test(m.text)), 5_000, 'the confirmation');
    await rig.stopApp();
    // The restart comes before the firing (else this test would not test it).
    expect(reminders(rig.platform, 'water')).toEqual([]);
    await rig.startApp();
    await rig.platform.waitFor(() => reminders(rig!.platform, 'water').length === 1, LEAD_S * 1_000 + 5_000, 'the reminder after the restart');
    // And once more across another restart after the firing: nothing fires again.
    await rig.stopApp();
    await missedMarker(rig.dir, 'rmarker02');
    await rig.startApp();
    await rig.platform.waitFor(() => reminders(rig!.platform, 'marker rmarker02').length === 1, 10_000, 'the caught-up marker');
    expect(reminders(rig.platform, 'water')).toHaveLength(1);
  });

  it('after downtime: a firing missed by 10 minutes runs once at start, one missed by a day is skipped and recorded', async () => {
    rig = await startAppRig({ responder: model });
    await rig.stopApp();
    const store = await Store.open({ url: undefined, dataDir: rig.dir, log: silentLogger });
    const routines = new RoutineStore(store, silentLogger);
    const now = Date.now();
    await routines.create(reminder('rrecent01', 'recent', now - 10 * 60_000));
    await routines.create({ ...reminder('rstale001', 'stale', now - 86_400_000 - 60_000), schedule: { kind: 'at', at: now - 86_400_000 - 60_000 } });
    await store.close();
    await missedMarker(rig.dir, 'rmarker03');
    await rig.startApp();
    await rig.platform.waitFor(() => reminders(rig!.platform, 'marker rmarker03').length === 1, 10_000, 'the caught-up marker');
    expect(reminders(rig.platform, 'recent')).toHaveLength(1);
    expect(reminders(rig.platform, 'stale')).toHaveLength(0);
    const stale = await rig.app.services.routines.get('rstale001');
    expect(stale!.skipped.map((entry) => entry.at)).toEqual([now - 86_400_000 - 60_000]);
    const recent = await rig.app.services.routines.get('rrecent01');
    expect(recent!.nextAt).toBe(now - 10 * 60_000 + 86_400_000);
    // Another restart does not catch up the same firing again.
    await rig.stopApp();
    await missedMarker(rig.dir, 'rmarker04');
    await rig.startApp();
    await rig.platform.waitFor(() => reminders(rig!.platform, 'marker rmarker04').length === 1, 10_000, 'the caught-up marker');
    expect(reminders(rig.platform, 'recent')).toHaveLength(1);
  });

  it('a prompt routine runs as a job of its owner and posts the result; one with an unknown tool is paused and its owner told', async () => {
    rig = await startAppRig({
      responder: (request) => (/background job/.test(String(request.messages[0]?.content)) ? textReply('DONE: the news is quiet today') : model(request)),
    });
    const at = Date.now() + 1_000;
    await rig.app.routines.scheduler.add({ ...reminder('rnews0001', 'news', at), schedule: { kind: 'at', at }, action: { kind: 'prompt', prompt: 'summarise the news' }, tools: ['time'] });
    await rig.platform.waitFor(() => rig!.platform.messagesIn(dm).some((m) => /Job \S+ "news" is done\.\s+the news is quiet today/.test(m.text)), 6_000, 'the job result');
    const [job] = await rig.app.services.jobs.list();
    expect(job).toMatchObject({ owner: 'test:owner', goal: 'summarise the news', tools: ['time'] });
    expect((await rig.app.services.routines.get('rnews0001'))!.lastResult).toMatch(/^started job j/);

    const later = Date.now() + 800;
    await rig.app.routines.scheduler.add({ ...reminder('rbroken01', 'broken', later), schedule: { kind: 'at', at: later }, action: { kind: 'prompt', prompt: 'use the gone tool' }, tools: ['no_such_tool'] });
    await rig.platform.waitFor(() => rig!.platform.messagesIn(dm).some((m) => /Routine rbroken01 "broken" is paused: it uses a tool that does not exist: no_such_tool/.test(m.text)), 5_000, 'the pause notice');
    expect((await rig.app.services.routines.get('rbroken01'))).toMatchObject({ enabled: false });
    expect(await rig.app.services.jobs.list()).toHaveLength(1);
  });

  it('the job of a prompt routine is told of the files its conversation had when it was scheduled', async () => {
    const asked: string[] = [];
    rig = await startAppRig({
      responder: (request) => {
        if (!/background job/.test(String(request.messages[0]?.content))) return model(request);
        asked.push(String(request.messages.find((m) => m.role === 'user')?.content));
        return textReply('DONE: read it');
      },
    });
    const at = Date.now() + 300;
    const files = [{ path: 'attachments/report.pdf', kind: 'document' as const, mimeType: 'application/pdf', sizeBytes: 2048, textPath: 'attachments/report.pdf.txt' }];
    await rig.app.routines.scheduler.add({ ...reminder('rfiles001', 'weekly report', at), schedule: { kind: 'at', at }, action: { kind: 'prompt', prompt: 'compare with the report' }, tools: ['files_read'], files });
    await rig.platform.waitFor(() => rig!.platform.messagesIn(dm).some((m) => /Job \S+ "weekly report" is done/.test(m.text)), 6_000, 'the job result');
    expect(asked[0]).toContain('- attachments/report.pdf (document, application/pdf, 2 KB; its text is in attachments/report.pdf.txt)');
  });

  it.skipIf(!process.env.PINCER_TEST_REDIS_URL)(
    `two instances on one Redis store post a reminder once${process.env.PINCER_TEST_REDIS_URL ? '' : ' (skipped: PINCER_TEST_REDIS_URL is not set)'}`,
    async () => {
      const url = new URL(process.env.PINCER_TEST_REDIS_URL!);
      url.pathname = '/6';
      const redis = new Redis(url.toString());
      await redis.flushdb();
      redis.disconnect();
      const llm: FakeLlm = await startFakeLlm({ responder: () => textReply('ok') });
      cleanups.push(() => llm.close());
      const platform = new TestPlatform();
      const apps: App[] = [];
      for (const name of ['a', 'b']) {
        const dir = mkdtempSync(join(tmpdir(), `pincer-routines-${name}-`));
        cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
        const config = parseConfig({ dataDir: dir, storeUrl: url.toString(), owners: ['test:owner'], llm: { baseUrl: llm.url, model: 'fake-model', stream: false } });
        const app = await createApp({ config, channels: [{ name: 'test', create: (deps) => platform.createChannel(deps) }] });
        await app.start();
        apps.push(app);
        cleanups.push(() => app.stop('test over'));
      }
      const [a, b] = apps as [App, App];
      expect(a.routines.scheduler.timersName).toBe('bullmq');
      const at = Date.now() + LEAD_S * 1_000;
      await a.routines.scheduler.add({ ...reminder('rshared01', 'shared', at), schedule: { kind: 'at', at } });
      // The other instance arms the same firing too: one queue entry, one claim.
      expect((await b.routines.scheduler.resume('rshared01'))?.nextAt).toBe(at);
      await platform.waitFor(() => reminders(platform, 'shared').length === 1, 6_000, 'the shared reminder');
      await marker(b, platform, 'rmarker05');
      expect(reminders(platform, 'shared')).toHaveLength(1);
    },
    20_000,
  );
});
