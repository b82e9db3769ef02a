/**
 * bench/cluster: the built product (`node dist/main.js`) on one Redis store,
 * with one instance and with three.
 *
 * - Throughput: 400 messages over 200 threads (two per thread, a thread's
 *   second once its first was delivered), a fake model answering after 100 ms,
 *   `agent.maxConcurrentTurns` 16; wall time from the first message to the
 *   last answer, on Telegram (one elected poller; the instances share
 *   Telegram's 30 messages a second, so it bounds both runs) and on Slack
 *   (Socket Mode on every instance; events spread over the connections).
 * - Failover, three instances with `cluster.leaseTtlMs` 2000 and 12 threads
 *   each writing every 300 ms: SIGKILL the owner of a busy thread (Telegram,
 *   and Slack, where no poller is involved) and time the kill to that thread's
 *   next answer from another instance; SIGKILL Telegram's elected poller and
 *   time the kill to the first answer to a message written after it.
 * - Capacity (cluster-capacity.ts): where each instance's turn slots are the
 *   bottleneck (a 1 s model, 4 slots), one instance against three, on Slack
 *   and on Discord.
 * - Rolling restart (cluster-rolling.ts): three instances SIGTERMed and
 *   started again in turn under load; lost, answered twice, the worst extra wait.
 * `npm run bench -- cluster <part>` runs one part: throughput, failover,
 * capacity or rolling.
 * Skipped, with the reason in its one row, when Redis does not answer at
 * PINCER_BENCH_REDIS_URL (default redis://127.0.0.1:6379); uses database 13.
 */
import { startFakeLlm, type FakeLlm } from '../test/fakes/llm/server.js';
import { startFakeSlack, type FakeSlack } from '../test/fakes/slack/index.js';
import { startFakeTelegram, type FakeTelegram } from '../test/fakes/telegram/index.js';
import { ensureBuilt } from '../test/e2e/build.js';
import {
  answerReport,
  echoesIn,
  echoResponder,
  flushDb,
  redisDbUrl,
  slackChat,
  startCluster,
  telegramChat,
  writeAll,
  type Cluster,
  type ClusterChat,
} from '../test/e2e/cluster-harness.js';
import { cleanUp, waitUntil } from '../test/e2e/pincer.js';
import { capacityRows } from './cluster-capacity.js';
import { firstLine, type Row } from './cluster-conversations.js';
import { rollingRows } from './cluster-rolling.js';

const MESSAGES = 400;
const THREADS = 200;
const LATENCY_MS = 100;
const MAX_CONCURRENT_TURNS = 16;
const LEASE_TTL_MS = 2_000;
const BUSY_THREADS = 12;
const BUSY_GAP_MS = 300;
const FAILOVER_ROUNDS = 3;
const CONFIG = `cluster:\n  leaseTtlMs: ${LEASE_TTL_MS}\nagent:\n  maxConcurrentTurns: ${MAX_CONCURRENT_TURNS}\n`;
const ONE = ['a'] as const;
const THREE = ['a', 'b', 'c'] as const;

type Platform = 'telegram' | 'slack';
/** Which instance a failover run kills. */
type Victim = 'thread owner' | 'telegram poller';

/** The parts of the benchmark, in the order they run. */
export const CLUSTER_PARTS = ['throughput', 'failover', 'capacity', 'rolling'] as const;
/** One part of the benchmark. */
export type ClusterPart = (typeof CLUSTER_PARTS)[number];

/** Runs the benchmark (every part unless `parts` is given); without Redis, one row that says why it was skipped. */
export async function runClusterBench(parts: readonly ClusterPart[] = CLUSTER_PARTS): Promise<Row[]> {
  const base = process.env.PINCER_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const storeUrl = redisDbUrl(base, 13);
  try {
    await flushDb(storeUrl);
  } catch (error) {
    return [{ measure: 'skipped', detail: `no Redis answers at ${base} (${firstLine(error)}); set PINCER_BENCH_REDIS_URL` }];
  }
  ensureBuilt();
  const llm = await startFakeLlm({ responder: echoResponder(LATENCY_MS), record: false });
  try {
    const rows: Row[] = [];
    if (parts.includes('throughput')) {
      for (const platform of ['telegram', 'slack'] as const) {
        const one = await throughput(llm, storeUrl, platform, ONE);
        const three = await throughput(llm, storeUrl, platform, THREE);
        rows.push(throughputRow(platform, ONE, one), throughputRow(platform, THREE, three, one));
      }
    }
    if (parts.includes('failover')) {
      rows.push(await failover(llm, storeUrl, 'telegram', 'thread owner'));
      rows.push(await failover(llm, storeUrl, 'telegram', 'telegram poller'));
      rows.push(await failover(llm, storeUrl, 'slack', 'thread owner'));
    }
    if (parts.includes('capacity')) rows.push(...(await capacityRows(storeUrl)));
    if (parts.includes('rolling')) rows.push(...(await rollingRows(storeUrl)));
    return rows;
  } finally {
    await cleanUp();
    await llm.close();
  }
}

/** A fresh platform fake with a member (and DM) per thread on Slack. */
async function startPlatform(platform: Platform, threads: number): Promise<FakeTelegram | FakeSlack> {
  if (platform === 'telegram') return startFakeTelegram();
  const slack = await startFakeSlack();
  for (let thread = 0; thread < threads; thread++) {
    slack.addUser({ id: `U0B${thread}`, name: `Person ${thread}` });
    slack.addConversation({ id: `D0B${thread}`, type: 'im', user: `U0B${thread}` });
  }
  return slack;
}

/** The conversation of thread `thread` on the platform. */
function chatOf(cluster: Cluster, fake: FakeTelegram | FakeSlack, thread: number): ClusterChat {
  return 'apiRoot' in fake ? telegramChat(cluster, fake, thread, 3_000_000 + thread) : slackChat(cluster, fake, thread, `U0B${thread}`, `D0B${thread}`);
}

/** Starts `ids` on a fresh store and a fresh platform fake; `run` gets the cluster; everything is stopped after. */
async function withCluster<T>(llm: FakeLlm, storeUrl: string, platform: Platform, ids: readonly string[], run: (cluster: Cluster, fake: FakeTelegram | FakeSlack) => Promise<T>): Promise<T> {
  await flushDb(storeUrl);
  const fake = await startPlatform(platform, THREADS);
  const cluster = await startCluster({ ids, storeUrl, llm, config: CONFIG, ...('apiRoot' in fake ? { telegram: fake } : { slack: fake }) });
  try {
    await cluster.waitRunning(60_000);
    return await run(cluster, fake);
  } finally {
    await cleanUp();
    await cluster.close();
    await fake.close();
  }
}

/** What one throughput run measured, or why it failed. */
interface Run {
  wallMs?: number;
  modelRequests?: number;
  answeredTwice?: number;
  error?: string;
}

/** One throughput run: all messages written, every one answered. */
async function throughput(llm: FakeLlm, storeUrl: string, platform: Platform, ids: readonly string[]): Promise<Run> {
  try {
    return await withCluster(llm, storeUrl, platform, ids, async (cluster, fake) => {
      const chats = Array.from({ length: THREADS }, (_, thread) => chatOf(cluster, fake, thread));
      const sent = new Map<number, string[]>();
      const started = performance.now();
      await writeAll(chats, MESSAGES / THREADS, 0, sent);
      await waitUntil(() => answerReport(chats, sent).missing.length === 0, 180_000, () => `every answer: ${answerReport(chats, sent).text}`);
      const wallMs = performance.now() - started;
      const modelRequests = cluster.exchanges('llm').filter((exchange) => exchange.path.endsWith('/chat/completions')).length;
      return { wallMs, modelRequests, answeredTwice: answerReport(chats, sent).duplicated.length };
    });
  } catch (error) {
    return { error: firstLine(error) };
  }
}

/** The row of a throughput run: messages per second, compared with one instance's when given. */
function throughputRow(platform: Platform, ids: readonly string[], run: Run, single?: Run): Row {
  const name = `throughput, ${platform}, ${ids.length} instance${ids.length > 1 ? 's' : ''}`;
  if (run.wallMs === undefined) return { measure: name, figure: 'failed', detail: run.error ?? '' };
  const perSecond = (ms: number) => MESSAGES / (ms / 1000);
  const versus = single?.wallMs !== undefined ? `, ${(perSecond(run.wallMs) / perSecond(single.wallMs)).toFixed(2)}x one instance` : '';
  const detail = `wall ${(run.wallMs / 1000).toFixed(2)} s${versus}; ${run.modelRequests} model requests, ${run.answeredTwice} answered twice`;
  return { measure: name, figure: perSecond(run.wallMs), unit: 'msgs/s', detail };
}

/** FAILOVER_ROUNDS kills of `victim`, each on a fresh cluster of three: the median and the worst. */
async function failover(llm: FakeLlm, storeUrl: string, platform: Platform, victim: Victim): Promise<Row> {
  const name = `failover, ${platform}, SIGKILL the ${victim}`;
  const times: number[] = [];
  const notes = new Set<string>();
  try {
    for (let round = 0; round < FAILOVER_ROUNDS; round++) {
      const { ms, note } = await withCluster(llm, storeUrl, platform, THREE, (cluster, fake) => killOnce(cluster, fake, victim));
      times.push(ms);
      if (note) notes.add(note);
    }
  } catch (error) {
    return { measure: name, figure: 'failed', detail: `after ${times.length} rounds: ${firstLine(error)}` };
  }
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  const what = victim === 'thread owner' ? 'kill -> next answer in the thread' : 'kill -> first answer to a message written after it';
  const detail = `${what}; ${(median / LEASE_TTL_MS).toFixed(2)}x leaseTtlMs ${LEASE_TTL_MS}; max ${Math.round(sorted.at(-1)!)} ms over ${times.length} rounds${notes.size ? `; ${[...notes].join('; ')}` : ''}`;
  return { measure: name, figure: median, unit: 'ms (median)', detail };
}

/** Busy threads, then one SIGKILL; the time from the signal to the answer that shows the work moved on. */
async function killOnce(cluster: Cluster, fake: FakeTelegram | FakeSlack, victim: Victim): Promise<{ ms: number; note?: string }> {
  const chats = Array.from({ length: BUSY_THREADS }, (_, thread) => chatOf(cluster, fake, thread));
  const sent = new Map<number, string[]>();
  let writing = true;
  const writers = chats.map(async (chat) => {
    for (let seq = 1; writing; seq++) {
      const text = `t${chat.thread}-m${seq}`;
      sent.set(chat.thread, [...(sent.get(chat.thread) ?? []), text]);
      await chat.send(text);
      await new Promise((resolve) => setTimeout(resolve, BUSY_GAP_MS));
    }
  });
  try {
    await waitUntil(() => chats.every((chat) => echoesIn(chat.replies()).length >= 3), 60_000, () => `the busy threads to be answered\n${cluster.describe()}`);
    const poller = cluster.poller();
    // A thread whose owner does not poll, so that each kill moves one thing: the thread, or the polling.
    const watched = chats.find((chat) => ![undefined, poller].includes(chat.answerer())) ?? chats[0]!;
    const owner = watched.answerer();
    const target = victim === 'thread owner' ? owner : poller;
    if (!target) throw new Error(`no ${victim} found\n${cluster.describe()}`);
    const note = victim === 'thread owner' && owner === poller ? 'the owner was also the poller' : undefined;
    const echoedBefore = new Set(echoesIn(watched.replies()));
    const writtenBefore = new Set([...sent.values()].flat());
    const moved = () => {
      const fresh = echoesIn(watched.replies()).filter((id) => !echoedBefore.has(id));
      if (victim === 'telegram poller') return fresh.some((id) => !writtenBefore.has(id));
      return fresh.length > 0 && watched.answerer() !== target;
    };
    const killedAt = performance.now();
    await cluster.kill9(target);
    await waitUntil(moved, 60_000, () => `an answer in ${watched.label} after ${target} was SIGKILLed\n${cluster.describe()}`);
    return { ms: performance.now() - killedAt, ...(note ? { note } : {}) };
  } finally {
    writing = false;
    await Promise.allSettled(writers);
  }
}
