/**
 * A thread runner whose instance can never claim its thread (a shared thread,
 * and the instance is shutting down) gives the work up: it does not schedule
 * it again and again.
 */
import { describe, expect, it } from 'vitest';
import { ThreadRunner, type RunnerContext } from '../../src/chat/thread-runner.js';
import { FairSemaphore } from '../../src/engine/semaphore.js';
import { testDm } from '../support/test-channel.js';

describe('ThreadRunner with a claim that fails', () => {
  it('abandons the work after one refused claim instead of rescheduling it', async () => {
    const chat = testDm('user-1');
    let claims = 0;
    const made: { runner?: ThreadRunner } = {};
    const context = {
      services: {},
      slots: new FairSemaphore(1),
      onIdle: () => undefined,
      claim: () => {
        claims += 1;
        // Ends a runner that would otherwise spin for ever, so that the test fails instead of hanging.
        if (claims >= 50) made.runner?.close();
        return Promise.resolve(false);
      },
    } as unknown as RunnerContext;
    const runner = (made.runner = new ThreadRunner('test:dm:user-1', chat, context));
    runner.accept({ type: 'message', chat, sender: { id: 'user-1', name: 'One' }, receivedAt: Date.now(), messageId: 'm1', text: 'hello', mentionsBot: true, replyToBot: false, attachments: [] });
    await runner.idle();
    expect(claims).toBe(1);
    expect(runner.busy).toBe(false);
    expect(runner.queuedMessages).toBe(0);
  });
});
