/**
 * A thread reads people's messages in the order they were written, even when
 * the platform hands one over late (Slack sends a message again, to another
 * connection, when it was not acknowledged in time): one that arrives while
 * later ones wait goes before them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HeldModel, startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const person = { id: 'writer', name: 'Writer' };
const chat = testDm(person.id);

/** The user messages of each model request, in order. */
const requests = (rigged: AppRig) => rigged.llm.requests.map((r) => r.messages.filter((m) => m.role === 'user').map((m) => String(m.content)));

describe('the order of waiting messages', () => {
  it('a message handed over late is read before the later ones waiting for the next turn', async () => {
    const model = new HeldModel();
    rig = await startAppRig({ responder: model.respond });
    const write = (messageId: string, text: string) => rig!.platform.channel.userMessage({ chat, sender: person, text, messageId });
    write('101', 'm1');
    await rig.platform.waitFor(() => model.waiting === 1, 10_000, 'the first model request');
    // The answer to m1 is being written; m3 and m4 come first, then m2, late.
    write('103', 'm3');
    write('104', 'm4');
    write('102', 'm2');
    await model.answerUntilIdle(rig.app);
    const read = requests(rig).flat();
    expect(read.filter((text, i) => read.indexOf(text) === i)).toEqual(['m1', 'm2', 'm3', 'm4']);
  });

  it('messages without a numeric id keep the order they arrived in', async () => {
    const model = new HeldModel();
    rig = await startAppRig({ responder: model.respond });
    rig.platform.channel.userMessage({ chat, sender: person, text: 'first' });
    await rig.platform.waitFor(() => model.waiting === 1, 10_000, 'the first model request');
    for (const text of ['second', 'third']) rig.platform.channel.userMessage({ chat, sender: person, text });
    await model.answerUntilIdle(rig.app);
    const read = requests(rig).flat();
    expect(read.filter((text, i) => read.indexOf(text) === i)).toEqual(['first', 'second', 'third']);
  });
});
