import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, rank } from '../../../src/tools/builtin/lib/memory-store.js';
import { memorySearchTool } from '../../../src/tools/builtin/memory-search.js';
import { memoryWriteTool } from '../../../src/tools/builtin/memory-write.js';
import { group, makeContext, openStore, tempDir } from '../support.js';

const U = { kind: 'person', userId: 'telegram:7' } as const;
const temps: (() => void)[] = [];
afterEach(() => temps.splice(0).forEach((cleanup) => cleanup()));

async function fresh() {
  const temp = tempDir();
  temps.push(temp.cleanup);
  let now = Date.UTC(2025, 0, 1);
  const store = await openStore(temp.dir);
  const memory = createMemoryStore(store, () => (now += 1000));
  return { dir: temp.dir, store, memory };
}

describe('memory tools', () => {
  it('write then search, per user, ranked by words in common', async () => {
    const { store, memory } = await fresh();
    const write = memoryWriteTool(memory);
    const search = memorySearchTool(memory);
    const alice = makeContext({ userId: 'telegram:1' });
    const bob = makeContext({ userId: 'discord:2' });
    expect(await write.execute({ text: 'Favourite colour is green' }, alice)).toMatch(/^Saved note \w+\. This user now has 1 note\.$/);
    await write.execute({ text: 'Allergic to peanuts' }, alice);
    await write.execute({ text: 'Prefers green tea over coffee' }, alice);
    await write.execute({ text: 'Favourite colour is blue' }, bob);

    const out = await search.execute({ query: 'favourite green colour', limit: 10 }, alice);
    const lines = out.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^- \[\w+\] 2025-01-01: Favourite colour is green$/);
    expect(lines[1]).toMatch(/Prefers green tea over coffee$/);
    expect(await search.execute({ query: 'blue', limit: 10 }, alice)).toBe('No notes match "blue".');
    expect(await search.execute({ query: 'blue', limit: 10 }, bob)).toMatch(/Favourite colour is blue$/);
    expect(await search.execute({ query: '', limit: 10 }, makeContext({ userId: 'nobody' }))).toBe('No notes saved yet.');
    await store.close();
  });

  it("keeps a group's notes for the group: every member finds them, nobody finds them in a DM", async () => {
    const { store, memory } = await fresh();
    const write = memoryWriteTool(memory);
    const search = memorySearchTool(memory);
    const inGroup = (userId: string, chat = '-100') => makeContext({ userId, threadKey: `telegram:${chat}`, approval: group });
    expect(await write.execute({ text: 'standup at nine' }, inGroup('telegram:1'))).toMatch(/^Saved note \w+\. This group now has 1 note\.$/);
    await write.execute({ text: 'my standup notes are private' }, makeContext({ userId: 'telegram:1' }));

    expect(await search.execute({ query: 'standup', limit: 10 }, inGroup('telegram:2'))).toMatch(/^- \[\w+\] 2025-01-01: standup at nine$/);
    expect(await search.execute({ query: 'standup', limit: 10 }, makeContext({ userId: 'telegram:1' }))).toMatch(/^- \[\w+\] 2025-01-01: my standup notes are private$/);
    expect(await search.execute({ query: 'standup', limit: 10 }, inGroup('telegram:1', '-200'))).toBe('No notes match "standup".');
    await store.close();
  });

  it('notes survive a restart', async () => {
    const { dir, store, memory } = await fresh();
    await memory.write(U, 'the wifi password is on the fridge');
    await store.close();
    const reopened = await openStore(dir);
    const hits = await createMemoryStore(reopened).search(U, 'wifi', 5);
    expect(hits.map((h) => h.text)).toEqual(['the wifi password is on the fridge']);
    await reopened.close();
  });

  it('keeps at most the newest notes per user', async () => {
    const { store } = await fresh();
    let now = 0;
    const memory = createMemoryStore(store, () => ++now, 20);
    for (let i = 0; i < 23; i++) await memory.write(U, `note ${i}`);
    const all = await memory.search(U, '', 100);
    expect(all).toHaveLength(20);
    expect(all[0]!.text).toBe('note 22');
    expect(all.at(-1)!.text).toBe('note 3');
    await store.close();
  });

  it('ranks more shared words first, newer first on ties, ignoring case and punctuation', () => {
    const entries = [
      { id: 'a', text: 'Paris trip in May', at: 1 },
      { id: 'b', text: 'trip to PARIS, booked hotel!', at: 2 },
      { id: 'c', text: 'hotel in Rome', at: 3 },
      { id: 'd', text: 'unrelated', at: 4 },
    ];
    expect(rank(entries, 'paris hotel').map((h) => [h.id, h.score])).toEqual([
      ['b', 2],
      ['c', 1],
      ['a', 1],
    ]);
  });
});
