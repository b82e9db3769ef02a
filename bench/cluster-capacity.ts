/**
 * The capacity part of bench/cluster: where each instance's own turn slots are
 * the bottleneck, not the platform's limit or the machine. A fake model that
 * answers after 1 s and `agent.maxConcurrentTurns` 4 let one instance answer
 * about 4 messages a second and three about 12, while the CPU stays mostly
 * idle. CONVERSATIONS people each write MESSAGES_EACH messages, each once the
 * previous one was answered (so no two messages are folded into one turn), on
 * Slack (Socket Mode on every instance) and on Discord (the gateway shard on
 * one elected instance; every instance runs turns from the shared inboxes).
 */
import { startFakeDiscord, type FakeDiscord } from '../test/fakes/discord/index.js';
import { startFakeLlm } from '../test/fakes/llm/server.js';
import { startFakeSlack, type FakeSlack } from '../test/fakes/slack/index.js';
import { answerReport, discordChat, echoResponder, flushDb, slackChat, startCluster, type Cluster, type ClusterChat } from '../test/e2e/cluster-harness.js';
import { cleanUp } from '../test/e2e/pincer.js';
import { converse, firstLine, type Reply, type Row } from './cluster-conversations.js';

const MODEL_MS = 1_000;
const TURN_SLOTS = 4;
/** Three times the slots of three instances, so that no slot waits for a person. */
const CONVERSATIONS = 36;
const MESSAGES_EACH = 4;
const CONFIG = `cluster:\n  leaseTtlMs: 2000\nagent:\n  maxConcurrentTurns: ${TURN_SLOTS}\n  userMessagesPerMinute: 1000\n`;

type Platform = 'slack' | 'discord';

/** What one run measured. */
interface Run {
  perSecond: number;
  wallMs: number;
  /** Model requests by instance, e.g. `a 48, b 47, c 49`. */
  spread: string;
  answeredTwice: number;
  missing: number;
  /** Which instances held Discord's gateway shard. */
  gateway?: string;
}

/** The capacity rows: each platform with one instance and with three, their ratio. */
export async function capacityRows(storeUrl: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (const platform of ['slack', 'discord'] as const) {
    let single: Run | undefined;
    for (const ids of [['a'], ['a', 'b', 'c']]) {
      const name = `capacity, ${platform}, ${ids.length} instance${ids.length > 1 ? 's' : ''}`;
      try {
        const run = await capacity(storeUrl, platform, ids);
        rows.push(capacityRow(name, run, single));
        single ??= run;
      } catch (error) {
        rows.push({ measure: name, figure: 'failed', detail: firstLine(error) });
      }
    }
  }
  return rows;
}

function capacityRow(name: string, run: Run, single: Run | undefined): Row {
  const ratio = single ? `${(run.perSecond / single.perSecond).toFixed(2)}x one instance (goal >= 2.5x); ` : '';
  const gateway = run.gateway ? `; gateway shard held by ${run.gateway}` : '';
  const detail = `${ratio}${CONVERSATIONS * MESSAGES_EACH} messages in ${(run.wallMs / 1000).toFixed(2)} s; model requests ${run.spread}; ${run.missing} unanswered, ${run.answeredTwice} answered twice${gateway}`;
  return { measure: name, figure: run.perSecond, unit: 'msgs/s', detail };
}

/** One run on a fresh store, platform fake and model. */
async function capacity(storeUrl: string, platform: Platform, ids: readonly string[]): Promise<Run> {
  await flushDb(storeUrl);
  const llm = await startFakeLlm({ responder: echoResponder(MODEL_MS), record: false });
  const fake = platform === 'slack' ? await startFakeSlack() : await startFakeDiscord();
  const cluster = await startCluster({ ids, storeUrl, llm, config: CONFIG, ...('botToken' in fake ? { slack: fake } : { discord: fake }) });
  try {
    await cluster.waitRunning(60_000);
    if (!('botToken' in fake)) await waitForGateway(cluster);
    const chats = Array.from({ length: CONVERSATIONS }, (_, thread) => chatOf(cluster, fake, thread));
    const replies: Reply[] = [];
    const sent = new Map<number, string[]>();
    const started = performance.now();
    await Promise.all(chats.map((chat) => converse(chat, { messages: MESSAGES_EACH, answerTimeoutMs: 120_000, replies, sent })));
    const last = Math.max(...replies.map((reply) => reply.answeredAt ?? 0));
    const report = answerReport(chats, sent);
    const wallMs = last - started;
    const counts = cluster.instances.map((instance) => `${instance.id} ${instance.llm.exchanges.filter((exchange) => exchange.path.endsWith('/chat/completions')).length}`);
    const holders = cluster.instances.filter((instance) => instance.process.output().includes('discord: gateway shard ready')).map((instance) => instance.id);
    return {
      perSecond: replies.length / (wallMs / 1000),
      wallMs,
      spread: counts.join(', '),
      answeredTwice: report.duplicated.length,
      missing: report.missing.length,
      ...(platform === 'discord' ? { gateway: holders.join(', ') || 'none' } : {}),
    };
  } finally {
    await cleanUp();
    await cluster.close();
    await fake.close();
    await llm.close();
  }
}

/** The conversation of person `thread`: a Slack DM, or a Discord DM. */
function chatOf(cluster: Cluster, fake: FakeSlack | FakeDiscord, thread: number): ClusterChat {
  if ('botToken' in fake) {
    fake.addUser({ id: `U0C${thread}`, name: `Person ${thread}` });
    fake.addConversation({ id: `D0C${thread}`, type: 'im', user: `U0C${thread}` });
    return slackChat(cluster, fake, thread, `U0C${thread}`, `D0C${thread}`);
  }
  return discordChat(cluster, fake, thread, fake.addMember(`Person ${thread}`));
}

/** In a cluster the Discord gateway is campaigned for after start-up: wait until one instance runs it. */
async function waitForGateway(cluster: Cluster): Promise<void> {
  await Promise.any(cluster.instances.map((instance) => instance.process.waitForOutput('discord: gateway shard ready', 30_000)));
}
