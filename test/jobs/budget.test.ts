/**
 * A job's model calls are booked against its owner's daily cost limit like
 * their chat turns: while the owner's running calls have the limit booked, a
 * job's step and a job's planning call are refused, the job fails saying so,
 * and no request reaches the model.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { LIMIT_MESSAGE, SIXTY_CENT_CALLS } from '../support/priced-model.js';
import { testDm, testGroup } from '../support/test-channel.js';
import type { JobRecord } from '../../src/jobs/job.js';

let rig: AppRig | undefined;
const held: (() => void)[] = [];
afterEach(async () => {
  for (const release of held.splice(0)) release();
  await rig?.close();
  rig = undefined;
});

const ada = { id: 'owner', name: 'Ada' };
const dm = testDm(ada.id);
const FREE = { usage: { prompt_tokens: 50, completion_tokens: 0 } };

/** Whether a request is a job's: its step (system prompt) or its planning call. */
function isJobRequest(request: FakeLlmRequest): boolean {
  return /background job/.test(String(request.messages[0]?.content ?? ''));
}

/**
 * The model: in the DM, "job X" or "planjob X" creates a job; in a group,
 * "hold" is answered only when the test lets it (the call stays booked until
 * then); a job is done at once. Every answer is free, so only bookings fill the
 * limit.
 */
function respond(request: FakeLlmRequest): FakeLlmEntry | Promise<FakeLlmEntry> {
  if (isJobRequest(request)) return textReply(String(request.messages[0]?.content).startsWith('You plan') ? '{"steps":[{"tool":"current_time"}]}' : 'DONE: done', FREE);
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return textReply('job created', FREE);
  const text = String(last.content);
  if (text.endsWith('hold')) return new Promise((resolve) => held.push(() => resolve(textReply('released', FREE))));
  const asked = /(plan)?job (\S+)$/.exec(text);
  if (!asked) return textReply(`echo: ${text}`, FREE);
  return toolCallReply([{ name: 'create_job', arguments: { title: `Job ${asked[2]}`, goal: asked[2], ...(asked[1] ? { plan: true } : {}) } }], FREE);
}

/** Polls the job store until a job has ended. */
async function endedJob(): Promise<JobRecord> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ended = (await rig!.app.services.jobs.list()).find((job) => job.state === 'failed' || job.state === 'completed');
    if (ended) return ended;
    if (Date.now() > deadline) throw new Error('timed out waiting for the job to end');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a job under a booked-out daily limit', () => {
  for (const [kind, text] of [
    ['step', 'job sums'],
    ['planning call', 'planjob sums'],
  ] as const) {
    it(`refuses the job's ${kind} while the owner's running calls have the limit booked`, async () => {
      rig = await startAppRig({ config: SIXTY_CENT_CALLS, responder: respond });
      rig.platform.channel.userMessage({ chat: dm, sender: ada, text });
      const prompt = await rig.platform.waitFor(() => rig!.platform.approvalsIn(dm)[0], 5_000, 'the create_job approval');
      // Two calls of Ada's in her groups, held at the model: $1.20 booked against her $1.00.
      for (const group of [testGroup('g1'), testGroup('g2')]) rig.platform.channel.userMessage({ chat: group, sender: ada, text: 'hold', mentionsBot: true });
      await rig.platform.waitFor(() => held.length === 2, 5_000, 'two held calls');
      rig.platform.channel.press(prompt.prompt.id, 'approve', ada);
      const job = await endedJob();
      expect(job.state).toBe('failed');
      expect(job.plan).toBe(kind === 'planning call');
      expect(job.result).toBe("Ada reached today's usage limit ($1.00)");
      expect(rig.llm.requests.filter(isJobRequest)).toEqual([]);
      // The turn that created the job goes on to its answer, refused the same way.
      await rig.platform.waitFor(() => rig!.platform.messagesIn(dm).some((message) => LIMIT_MESSAGE.test(message.text)), 5_000, 'the limit message in the DM');
      await rig.platform.waitFor(() => rig!.platform.messagesIn(dm).some((message) => message.text.endsWith(`failed: Ada reached today's usage limit ($1.00).`)), 5_000, "the job's final message");
    });
  }
});
