import { describe, expect, it } from 'vitest';
import { editParts, sendParts, ShownParts, type PartOperations, type PartPosition } from '../../src/channels/multipart.js';

const BLANK = '…';

/** An in-memory platform: messages by id, every call recorded, refusals injected per operation and id. */
class FakePlatform {
  readonly messages = new Map<string, string>();
  readonly calls: string[] = [];
  readonly positions: PartPosition[] = [];
  readonly refused: string[] = [];
  readonly refuse = { delete: new Set<string>(), blank: new Set<string>() };
  private next = 1;

  ops(shown?: ShownParts, options: { alwaysEdit?: (at: PartPosition) => boolean } = {}): PartOperations<string> {
    return {
      send: async (text, at) => {
        const id = `m${this.next++}`;
        this.calls.push(`send ${id}`);
        this.positions.push(at);
        this.messages.set(id, text);
        return id;
      },
      edit: async (id, text, at) => {
        this.calls.push(`edit ${id}`);
        this.positions.push(at);
        this.messages.set(id, text);
        return id;
      },
      delete: async (id) => {
        this.calls.push(`delete ${id}`);
        if (this.refuse.delete.has(id)) throw new Error('delete refused');
        this.messages.delete(id);
      },
      blank: async (id) => {
        this.calls.push(`blank ${id}`);
        if (this.refuse.blank.has(id)) throw new Error('blank refused');
        this.messages.set(id, BLANK);
      },
      onRefused: (id, step) => this.refused.push(`${step} ${id}`),
      ...(shown ? { cache: { shown, key: (id: string) => `chat:${id}`, text: (text: string) => text, ...options } } : {}),
    };
  }

  texts(ids: readonly string[]): (string | undefined)[] {
    return ids.map((id) => this.messages.get(id));
  }
}

describe('sendParts', () => {
  it('sends every part in order and tells each its position', async () => {
    const platform = new FakePlatform();
    const ids = await sendParts(['a', 'b', 'c'], platform.ops());
    expect(ids).toEqual(['m1', 'm2', 'm3']);
    expect(platform.texts(ids)).toEqual(['a', 'b', 'c']);
    expect(platform.positions).toEqual([
      { index: 0, last: false },
      { index: 1, last: false },
      { index: 2, last: true },
    ]);
  });
});

describe('editParts', () => {
  it('edits the parts both texts have and sends the extra ones after them', async () => {
    const platform = new FakePlatform();
    const ops = platform.ops();
    const ids = await editParts(await sendParts(['a'], ops), ['A', 'B', 'C'], ops);
    expect(ids).toEqual(['m1', 'm2', 'm3']);
    expect(platform.texts(ids)).toEqual(['A', 'B', 'C']);
    expect(platform.calls).toEqual(['send m1', 'edit m1', 'send m2', 'send m3']);
    expect(platform.positions.slice(1).map((at) => at.last)).toEqual([false, false, true]);
  });

  it('deletes the parts the new text no longer needs', async () => {
    const platform = new FakePlatform();
    const ops = platform.ops();
    const ids = await editParts(await sendParts(['a', 'b', 'c'], ops), ['A'], ops);
    expect(ids).toEqual(['m1']);
    expect([...platform.messages]).toEqual([['m1', 'A']]);
    expect(platform.refused).toEqual([]);
  });

  it('blanks a surplus part the platform refuses to delete, and keeps it in the reply', async () => {
    const platform = new FakePlatform();
    const ops = platform.ops();
    const sent = await sendParts(['a', 'b', 'c'], ops);
    platform.refuse.delete.add('m2');
    const ids = await editParts(sent, ['A'], ops);
    expect(ids).toEqual(['m1', 'm2']);
    expect(platform.texts(['m1', 'm2', 'm3'])).toEqual(['A', BLANK, undefined]);
    expect(platform.refused).toEqual(['delete m2']);
  });

  it('fills a blanked part again when the reply grows back', async () => {
    const platform = new FakePlatform();
    const ops = platform.ops();
    const sent = await sendParts(['a', 'b'], ops);
    platform.refuse.delete.add('m2');
    const shrunk = await editParts(sent, ['A'], ops);
    const grown = await editParts(shrunk, ['A', 'B'], ops);
    expect(grown).toEqual(['m1', 'm2']);
    expect(platform.texts(grown)).toEqual(['A', 'B']);
  });

  it('leaves a part that can be neither deleted nor blanked, drops it from the reply and does not throw', async () => {
    const platform = new FakePlatform();
    const ops = platform.ops();
    const sent = await sendParts(['a', 'b'], ops);
    platform.refuse.delete.add('m2');
    platform.refuse.blank.add('m2');
    await expect(editParts(sent, ['A'], ops)).resolves.toEqual(['m1']);
    expect(platform.texts(['m2'])).toEqual(['b']);
    expect(platform.refused).toEqual(['delete m2', 'blank m2']);
  });

  it('uses the id an edit returns when the platform replaced the part', async () => {
    const platform = new FakePlatform();
    const ops = platform.ops(new ShownParts());
    const sent = await sendParts(['a', 'b'], ops);
    const replacing: PartOperations<string> = { ...ops, edit: (_id, text, at) => ops.send(text, at) };
    expect(await editParts(sent, ['A', 'B'], replacing)).toEqual(['m3', 'm4']);
  });

  describe('with a cache', () => {
    it('skips the parts whose text did not change', async () => {
      const platform = new FakePlatform();
      const ops = platform.ops(new ShownParts());
      const sent = await sendParts(['a', 'b'], ops);
      await editParts(sent, ['a', 'B'], ops);
      await editParts(sent, ['a', 'B'], ops);
      expect(platform.calls).toEqual(['send m1', 'send m2', 'edit m2']);
    });

    it('edits anyway where the operations ask it to (buttons change)', async () => {
      const platform = new FakePlatform();
      const ops = platform.ops(new ShownParts(), { alwaysEdit: (at) => at.last });
      const sent = await sendParts(['a', 'b'], ops);
      await editParts(sent, ['a', 'b'], ops);
      expect(platform.calls).toEqual(['send m1', 'send m2', 'edit m2']);
    });

    it('does not blank a part again once it is blank', async () => {
      const platform = new FakePlatform();
      const ops = platform.ops(new ShownParts());
      const sent = await sendParts(['a', 'b'], ops);
      platform.refuse.delete.add('m2');
      const shrunk = await editParts(sent, ['A'], ops);
      const calls = platform.calls.length;
      expect(await editParts(shrunk, ['A'], ops)).toEqual(['m1', 'm2']);
      expect(platform.calls.length).toBe(calls);
    });

    it('forgets a deleted part, so an id reused later is edited', async () => {
      const shown = new ShownParts();
      const platform = new FakePlatform();
      const ops = platform.ops(shown);
      await editParts(await sendParts(['a', 'b'], ops), ['a'], ops);
      expect(shown.size).toBe(1);
    });
  });
});

describe('ShownParts', () => {
  it('keeps at most its limit, evicting the least recently used part', () => {
    const shown = new ShownParts(2);
    shown.set('a', '1');
    shown.set('b', '2');
    expect(shown.get('a')).toBe('1');
    shown.set('c', '3');
    expect(shown.size).toBe(2);
    expect(shown.get('b')).toBeUndefined();
    expect(shown.get('a')).toBe('1');
    expect(shown.get('c')).toBe('3');
  });
});
