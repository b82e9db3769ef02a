/**
 * The rolling-restart part of bench/cluster: three instances on Slack while
 * CONVERSATIONS people each write (a message, wait for its answer, think about
 * THINK_MS, the next); each instance in turn is SIGTERMed, started again, and
 * waited for before the next. Counts the messages never answered and the ones
 * answered twice, and the worst extra wait of a reply over the normal reply
 * time (the median before the first restart); the goal is the lease TTL + 1 s.
 * The model (1 s) and the turn slots (64 an instance) leave room for the load
 * on two instances, so what a reply waits beyond the normal is the handover,
 * not a lack of capacity.
 */
import { startFakeLlm } from '../test/fakes/llm/server.js';
import { startFakeSlack } from '../test/fakes/slack/index.js';
import { answerReport, echoResponder, flushDb, slackChat, startCluster, type Cluster } from '../test/e2e/cluster-harness.js';
import { cleanUp, waitUntil } from '../test/e2e/pincer.js';
import { converse, firstLine, quantile, type Reply, type Row } from './cluster-conversations.js';

const MODEL_MS = 1_000;
const TURN_SLOTS = 64;
const LEASE_TTL_MS = 2_000;
const CONVERSATIONS = 200;
/** A person's pause after an answer: between 0.5 and 1.5 s. */
const THINK_MS = () => 500 + Math.random() * 1_000;
const WARM_UP_MS = 8_000;
/** After an instance is back, before the next one is stopped. */
const SETTLE_MS = 4_000;
/** A reply not seen within this is counted as lost unless it comes before the end. */
const ANSWER_TIMEOUT_MS = 60_000;
const CONFIG = `cluster:\n  leaseTtlMs: ${LEASE_TTL_MS}\nagent:\n  maxConcurrentTurns: ${TURN_SLOTS}\n  userMessagesPerMinute: 1000\n`;
const IDS = ['a', 'b', 'c'] as const;

/** One instance's restart. */
interface Restart {
  id: string;
  /** performance.now() when SIGTERM was sent. */
  at: number;
  stopMs: number;
  exitCode: number | null;
  /** SIGTERM to "pincer is running" again. */
  backMs: number;
}

/** The rows of the rolling restart: lost, answered twice, and the worst extra wait. */
export async function rollingRows(storeUrl: string): Promise<Row[]> {
  const name = `rolling restart, slack, 3 instances, ${CONVERSATIONS} conversations`;
  try {
    return await rollingRestart(storeUrl, name);
  } catch (error) {
    return [{ measure: name, figure: 'failed', detail: firstLine(error) }];
  }
}

async function rollingRestart(storeUrl: string, name: string): Promise<Row[]> {
  await flushDb(storeUrl);
  const llm = await startFakeLlm({ responder: echoResponder(MODEL_MS), record: false });
  const fake = await startFakeSlack();
  const cluster = await startCluster({ ids: IDS, storeUrl, llm, config: CONFIG, slack: fake });
  try {
    await cluster.waitRunning(60_000);
    const chats = Array.from({ length: CONVERSATIONS }, (_, thread) => {
      fake.addUser({ id: `U0R${thread}`, name: `Person ${thread}` });
      fake.addConversation({ id: `D0R${thread}`, type: 'im', user: `U0R${thread}` });
      return slackChat(cluster, fake, thread, `U0R${thread}`, `D0R${thread}`);
    });
    const replies: Reply[] = [];
    const sent = new Map<number, string[]>();
    let going = true;
    const started = performance.now();
    // The first messages spread over a think time, so that the people do not write in step.
    const people = chats.map(async (chat) => {
      await new Promise((resolve) => setTimeout(resolve, THINK_MS()));
      await converse(chat, { going: () => going, thinkMs: THINK_MS, answerTimeoutMs: ANSWER_TIMEOUT_MS, replies, sent });
    });
    const restarts: Restart[] = [];
    try {
      await new Promise((resolve) => setTimeout(resolve, WARM_UP_MS));
      for (const id of IDS) restarts.push(await restartOne(cluster, id));
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    } finally {
      going = false;
      await Promise.all(people);
    }
    // A message whose answer was not seen in time may still be answered (late, or with the next one).
    await waitUntil(() => answerReport(chats, sent).missing.length === 0, 10_000, () => '').catch(() => undefined);
    const report = answerReport(chats, sent);
    if (report.missing.length || report.duplicated.length) console.log(`bench/cluster: rolling restart: ${report.text}\n${cluster.describe(report.troubled.slice(0, 5))}`);
    const answeredBy = (id: string) => cluster.exchanges('slack').find((exchange) => /chat\.(postMessage|update)$/.test(exchange.path) && exchange.requestBody.includes(id))?.instance ?? '?';
    return rows(name, replies, restarts, report.missing.length, report.duplicated.length, performance.now() - started, answeredBy);
  } finally {
    await cleanUp();
    await cluster.close();
    await fake.close();
    await llm.close();
  }
}

/** SIGTERM, then the same instance started again; returns once it says it runs. */
async function restartOne(cluster: Cluster, id: string): Promise<Restart> {
  const at = performance.now();
  const exitCode = await cluster.terminate(id, 60_000);
  const stopMs = performance.now() - at;
  await cluster.restart(id).process.waitForOutput('pincer is running', 60_000);
  const backMs = performance.now() - at;
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  return { id, at, stopMs, exitCode, backMs };
}

function rows(name: string, replies: readonly Reply[], restarts: readonly Restart[], lost: number, twice: number, wallMs: number, answeredBy: (id: string) => string): Row[] {
  const firstStop = restarts[0]?.at ?? Number.POSITIVE_INFINITY;
  const timed = replies.filter((reply) => reply.answeredAt !== undefined);
  const waitOf = (reply: Reply) => reply.answeredAt! - reply.sentAt;
  const normal = quantile(timed.filter((reply) => reply.sentAt < firstStop && reply.answeredAt! < firstStop).map(waitOf), 0.5);
  const worst = timed.reduce<Reply | undefined>((most, reply) => (!most || waitOf(reply) > waitOf(most) ? reply : most), undefined);
  const extra = worst ? waitOf(worst) - normal : Number.NaN;
  const goal = LEASE_TTL_MS + 1_000;
  const near = worst ? restarts.filter((restart) => restart.at <= worst.answeredAt!).at(-1) : undefined;
  const when = (reply: Reply, restart: Restart) => `${reply.id} written ${((reply.sentAt - restart.at) / 1000).toFixed(1)} s after the SIGTERM of ${restart.id}, answered by ${answeredBy(reply.id)}`;
  const worstOnes = timed
    .filter((reply) => waitOf(reply) - normal > goal)
    .sort((a, b) => waitOf(b) - waitOf(a))
    .slice(0, 3)
    .map((reply) => {
      const restart = restarts.filter((r) => r.at <= reply.answeredAt!).at(-1);
      return `${Math.round(waitOf(reply))} ms: ${restart ? when(reply, restart) : reply.id}`;
    });
  const late = timed.filter((reply) => waitOf(reply) - normal > goal).length;
  const untimed = replies.length - timed.length;
  const stops = restarts.map((restart) => `${restart.id}: stopped in ${(restart.stopMs / 1000).toFixed(1)} s (exit ${restart.exitCode}), running again after ${(restart.backMs / 1000).toFixed(1)} s`).join('; ');
  return [
    { measure: `${name}: lost`, figure: lost, unit: 'messages', detail: `of ${replies.length} written over ${(wallMs / 1000).toFixed(0)} s (goal 0)${untimed ? `; ${untimed} not answered within ${ANSWER_TIMEOUT_MS / 1000} s` : ''}` },
    { measure: `${name}: answered twice`, figure: twice, unit: 'messages', detail: 'goal 0' },
    {
      measure: `${name}: worst extra wait`,
      figure: extra,
      unit: 'ms',
      detail: `over the normal reply time ${Math.round(normal)} ms (median before the first restart; p99 of all ${Math.round(quantile(timed.map(waitOf), 0.99))} ms); goal <= lease TTL + 1 s = ${goal} ms: ${extra <= goal ? 'met' : 'not met'}; ${late} replies over it${near ? `; worst during the restart of ${near.id}` : ''}${worstOnes.length ? ` (${worstOnes.join('; ')})` : ''}; ${stops}`,
    },
  ];
}
