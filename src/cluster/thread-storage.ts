/**
 * Thread records on a shared Redis, written only by the instance that holds the
 * thread's lease: a script checks the lease's fencing token and refuses the
 * write of an instance whose lease lapsed. A thread is three keys: its small
 * fields (`head`), its messages as an append log (a list: a turn pushes its new
 * messages), and its inbox (a list of accepted messages, pushed by whichever
 * instance received them, in arrival order, put in the chat's order when read,
 * and taken out by the same write that puts them in the history).
 */
import type { ChatInfo } from '../channels/types.js';
import { StoreError } from '../errors.js';
import type { QueuedMessage, ThreadRecord } from '../engine/history.js';
import { ThreadRecordSchema, zeroUsage } from '../engine/history.js';
import { inChatOrder } from '../engine/inbox.js';
import type { ThreadDelta, ThreadStorage } from '../engine/thread-storage.js';
import type { Logger } from '../log.js';
import { CLUSTER_PREFIX, type ClusterNode } from './node.js';

/** An accepted message waiting in a thread's inbox, with the chat it came from. */
export interface InboxEntry {
  chat: ChatInfo;
  message: QueuedMessage;
  /** Its place in the chat, written by earlier versions (the order now comes from the message id, when read). */
  order?: string;
}

/**
 * A stored inbox (entries in arrival order: every instance only appends) in
 * the order the thread reads it, by the one rule of `insertInOrder`.
 */
export function inboxInOrder(stored: readonly string[]): InboxEntry[] {
  return inChatOrder(
    stored.map((text) => JSON.parse(text) as InboxEntry),
    (entry) => entry.message.messageId,
  );
}

/** Writes the head and appends (or replaces) messages when ARGV[1] holds the lease; takes consumed ids out of the inbox. */
const WRITE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('STALE the thread lease is not held') end
redis.call('SET', KEYS[2], ARGV[2])
if ARGV[3] == '1' then redis.call('DEL', KEYS[3]) end
local n = tonumber(ARGV[4])
if n > 0 then
  local gone = {}
  for i = 5, 4 + n do gone[ARGV[i]] = true end
  for _, entry in ipairs(redis.call('LRANGE', KEYS[4], 0, -1)) do
    local ok, decoded = pcall(cjson.decode, entry)
    if ok and gone[decoded['message']['id']] then redis.call('LREM', KEYS[4], 1, entry) end
  end
end
for i = 5 + n, #ARGV, 500 do
  redis.call('RPUSH', KEYS[3], unpack(ARGV, i, math.min(i + 499, #ARGV)))
end
return 1`;

/** The keys of a thread. */
export function threadKeys(thread: string): { lease: string; head: string; log: string; inbox: string } {
  return {
    lease: `${CLUSTER_PREFIX}lease:${leaseNameOf(thread)}`,
    head: `${CLUSTER_PREFIX}head:${thread}`,
    log: `${CLUSTER_PREFIX}log:${thread}`,
    inbox: `${CLUSTER_PREFIX}inbox:${thread}`,
  };
}

/** The lease of a thread. */
export function leaseNameOf(thread: string): string {
  return `thread:${thread}`;
}

/** How the storage finds the lease a write carries. */
export interface LeaseHolder {
  /** `instance#token` when this instance holds the thread's lease. */
  holderOf(thread: string): string | undefined;
  /** Runs `write` under the thread's lease, taking it for the while when this instance does not hold it. */
  borrow<T>(thread: string, write: (holder: string) => Promise<T>): Promise<T>;
  /** Whether this instance still holds the thread's lease, asked of Redis (one round trip). */
  confirm(thread: string): Promise<boolean>;
}

/** {@link ThreadStorage} on the cluster's Redis, fenced by the thread's lease. */
export class RedisThreadStorage implements ThreadStorage {
  /** Threads read from the store of a single instance: their first write here writes every message. */
  private readonly adopted = new Set<string>();

  constructor(
    private readonly node: ClusterNode,
    private readonly leases: LeaseHolder,
    private readonly log: Logger,
    /** Where threads lived before this instance joined a cluster (read once, then written here). */
    private readonly previous?: ThreadStorage,
  ) {}

  async read(thread: string): Promise<ThreadRecord | undefined> {
    const keys = threadKeys(thread);
    const results = await this.node.redis.multi().get(keys.head).lrange(keys.log, 0, -1).lrange(keys.inbox, 0, -1).exec();
    if (!results) throw new StoreError('redis', `thread ${thread} could not be read`);
    const [head, log, inbox] = results.map(([error, value]) => {
      if (error) throw error;
      return value;
    }) as [string | null, string[], string[]];
    const entries = inboxInOrder(inbox);
    if (head === null) {
      const earlier = await this.previous?.read(thread);
      if (earlier) {
        this.adopted.add(thread);
        return { ...earlier, inbox: entries.map((entry) => entry.message) };
      }
      // A thread whose first messages wait in its inbox.
      if (!entries.length) return undefined;
      return ThreadRecordSchema.parse({ key: thread, chat: entries[0]!.chat, messages: [], groupContext: [], usage: zeroUsage(), turns: 0, lastIteration: 0, updatedAt: Date.now(), inbox: entries.map((entry) => entry.message) });
    }
    const parsed = ThreadRecordSchema.safeParse({ ...(JSON.parse(head) as object), messages: log.map((text) => JSON.parse(text) as unknown), inbox: entries.map((entry) => entry.message) });
    if (parsed.success) return parsed.data;
    this.log.error({ thread, reason: parsed.error.issues.slice(0, 3).map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ') }, 'cluster: a corrupt thread record was ignored');
    return undefined;
  }

  holdsLease(thread: string): Promise<boolean> {
    return this.leases.confirm(thread);
  }

  async write(thread: string, record: ThreadRecord, delta: ThreadDelta): Promise<void> {
    const rewrite = delta.rewrite || this.adopted.has(thread);
    const { messages, inbox: _inbox, ...head } = record;
    const fresh = rewrite ? messages : messages.slice(delta.from);
    const keys = threadKeys(thread);
    const run = (holder: string) =>
      this.node.redis.eval(
        WRITE,
        4,
        keys.lease,
        keys.head,
        keys.log,
        keys.inbox,
        holder,
        JSON.stringify(head),
        rewrite ? '1' : '0',
        delta.consumed.length,
        ...delta.consumed,
        ...fresh.map((message) => JSON.stringify(message)),
      );
    const holder = this.leases.holderOf(thread);
    await (holder ? run(holder) : this.leases.borrow(thread, run));
    this.adopted.delete(thread);
  }
}
