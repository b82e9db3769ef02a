/**
 * A job's step reads its mailbox (the stored record) only when there may be
 * mail: after a message was posted here or on another instance, on a run's
 * first step, and at least every few seconds should a notice be lost.
 */
import { describe, expect, it } from 'vitest';
import { JobMailbox, RECHECK_MS, type MailNotices } from '../../src/jobs/mailbox.js';

/** Notices between instances as a list of what was sent, and a way to deliver one from elsewhere. */
function notices() {
  const sent: string[] = [];
  const handlers: ((id: string) => void)[] = [];
  const bus: MailNotices = {
    mail: (id) => {
      sent.push(id);
      return Promise.resolve();
    },
    onMail: (handler) => void handlers.push(handler),
  };
  return { bus, sent, fromElsewhere: (id: string) => handlers.forEach((handler) => handler(id)) };
}

describe('the job mailbox', () => {
  it('reads on the first step of a run, then not again until mail comes', () => {
    let now = 1_000_000;
    const mailbox = new JobMailbox(notices().bus, () => now);
    mailbox.runStarted('j1');
    expect(mailbox.shouldRead('j1')).toBe(true);
    now += 100;
    expect(mailbox.shouldRead('j1')).toBe(false);
    expect(mailbox.shouldRead('j1')).toBe(false);
  });

  it('reads at the next step after a message posted here, and tells the other instances', async () => {
    const { bus, sent } = notices();
    let now = 1_000_000;
    const mailbox = new JobMailbox(bus, () => now);
    mailbox.runStarted('j1');
    mailbox.shouldRead('j1');
    now += 10;
    await mailbox.posted('j1');
    expect(sent).toEqual(['j1']);
    expect(mailbox.shouldRead('j1')).toBe(true);
    expect(mailbox.shouldRead('j1')).toBe(false);
  });

  it('reads after another instance says a message came, and only for that job', () => {
    const { bus, fromElsewhere } = notices();
    let now = 1_000_000;
    const mailbox = new JobMailbox(bus, () => now);
    for (const id of ['j1', 'j2']) {
      mailbox.runStarted(id);
      mailbox.shouldRead(id);
    }
    now += 10;
    fromElsewhere('j2');
    expect(mailbox.shouldRead('j1')).toBe(false);
    expect(mailbox.shouldRead('j2')).toBe(true);
  });

  it('reads again after a while without any notice, should one have been lost', () => {
    let now = 1_000_000;
    const mailbox = new JobMailbox(notices().bus, () => now);
    mailbox.runStarted('j1');
    mailbox.shouldRead('j1');
    now += RECHECK_MS - 1;
    expect(mailbox.shouldRead('j1')).toBe(false);
    now += 1;
    expect(mailbox.shouldRead('j1')).toBe(true);
  });

  it('reads on the first step of the next run, though nothing was heard in between', () => {
    let now = 1_000_000;
    const mailbox = new JobMailbox(notices().bus, () => now);
    mailbox.runStarted('j1');
    mailbox.shouldRead('j1');
    mailbox.runEnded('j1');
    now += 10;
    mailbox.runStarted('j1');
    expect(mailbox.shouldRead('j1')).toBe(true);
  });
});
