/**
 * Loop guards and compactions in the console's conversation view, over plain
 * HTTP: a model that makes the same call again and again meets the guards (a
 * warning, then the Continue/Stop question in a DM), a long conversation is
 * compacted; each shows in the conversation with its summary, and the live
 * stream says so as it happens. A group admin sees the marks of their group.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testDm, testGroup } from '../../support/test-channel.js';
import { signIn, startConsoleRig, type ConsoleClient, type ConsoleRig } from './rig.js';
import { PASSWORD, repeatingModel, signInTool } from './support.js';

let rig: ConsoleRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

interface Mark {
  kind: 'guard' | 'compaction';
  action?: string;
  guard?: string;
  summary?: string;
  before?: number;
  after?: number;
}
interface ConversationView {
  messages: Array<{ role: string; text: string }>;
  marks: Mark[];
  pendingApproval?: { summary: string };
}

/** The change kinds the live stream told `client` of while `act` ran (and a moment after). */
async function heardWhile(client: ConsoleClient, base: string, act: () => Promise<void>): Promise<Array<{ thread: string; kind: string }>> {
  const controller = new AbortController();
  const response = await fetch(`${base}/console/api/events`, { headers: { cookie: client.cookie }, signal: controller.signal });
  const heard: Array<{ thread: string; kind: string }> = [];
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (const match of buffer.matchAll(/^data: (.*)$/gm)) heard.push(JSON.parse(match[1]!) as { thread: string; kind: string });
        buffer = buffer.slice(buffer.lastIndexOf('\n') + 1);
      }
    } catch {
      // Aborted at the end.
    }
  })();
  await act();
  await new Promise((resolve) => setTimeout(resolve, 300));
  controller.abort();
  await reading;
  return heard;
}

describe('guards and compactions in a conversation', () => {
  it('shows the loop guard\'s warning and its Continue/Stop question, live and after a reload', async () => {
    rig = await startConsoleRig({ tools: [signInTool()], responder: repeatingModel });
    const r = rig;
    const owner = await signIn(r, 'owner');
    const dm = testDm('owner');
    const heard = await heardWhile(owner, r.base, async () => {
      r.platform.channel.userMessage({ chat: dm, sender: { id: 'owner', name: 'owner' }, text: 'loop please' });
      await r.platform.waitFor(() => r.platform.approvalsIn(dm).length > 0, 10_000, 'the Continue/Stop question');
      await r.app.runtime.idle();
    });
    expect(heard).toContainEqual({ thread: 'test:dm-owner', kind: 'guard' });
    const view = (await (await owner.get(`/console/api/conversations/${encodeURIComponent('test:dm-owner')}`)).json()) as ConversationView;
    const guards = view.marks.filter((mark) => mark.kind === 'guard');
    // The ladder: a first warning, a second when it goes on, then the person is asked.
    expect(guards.map((mark) => mark.action)).toEqual(['warning', 'warning', 'question']);
    expect(guards[0]!.summary).toMatch(/sign_in_site/);
    // The guard's words quote the call's arguments: its sensitive one is hidden there too.
    expect(guards[0]!.summary).toContain('password "[redacted]"');
    expect(view.pendingApproval?.summary).toContain('[redacted]');
    expect(JSON.stringify(view)).not.toContain(PASSWORD);
  }, 30_000);

  it('shows a compaction and the summary that replaced the older messages; a group admin sees it in their group', async () => {
    rig = await startConsoleRig({ responder: repeatingModel, config: { agent: { maxContextTokens: 1000, keepRecentMessages: 2 } } });
    const r = rig;
    const group = testGroup('g1', 'Garden club');
    r.platform.chatAdmins.set('g1', new Set(['alice']));
    const say = async (i: number) => {
      r.platform.channel.userMessage({ chat: group, sender: { id: 'alice', name: 'alice' }, text: `${i} ${'filler '.repeat(200)}`, mentionsBot: true });
      await r.platform.waitFor(() => r.platform.messagesIn(group).length === i + 1, 5_000, `answer ${i}`);
    };
    // The bot has talked in the group before alice signs in: that is how the console knows she administers it.
    await say(0);
    await r.app.runtime.idle();
    const alice = await signIn(r, 'alice');
    const heard = await heardWhile(alice, r.base, async () => {
      for (let i = 1; i < 4; i++) await say(i);
      await r.app.runtime.idle();
    });
    expect(heard).toContainEqual({ thread: 'test:g1', kind: 'compaction' });
    const view = (await (await alice.get(`/console/api/conversations/${encodeURIComponent('test:g1')}`)).json()) as ConversationView;
    const compactions = view.marks.filter((mark) => mark.kind === 'compaction');
    expect(compactions.length).toBeGreaterThan(0);
    expect(compactions[0]!.after!).toBeLessThan(compactions[0]!.before!);
    expect(view.messages[0]).toEqual({ role: 'summary', text: 'They talked about filler.' });
    // Another group's admin does not see it.
    r.platform.chatAdmins.set('g2', new Set(['bob']));
    r.platform.channel.userMessage({ chat: testGroup('g2'), sender: { id: 'bob', name: 'bob' }, text: 'hi', mentionsBot: true });
    await r.platform.waitFor(() => r.platform.messagesIn(testGroup('g2')).length === 1, 5_000, 'the answer in g2');
    await r.app.runtime.idle();
    const bob = await signIn(r, 'bob');
    expect((await bob.get(`/console/api/conversations/${encodeURIComponent('test:g1')}`)).status).toBe(404);
  }, 30_000);
});
