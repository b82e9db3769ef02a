import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolError } from '../../src/errors.js';
import { UNTRUSTED_NOTICE } from '../../src/safety/wrap.js';
import { httpFetchTool } from '../../src/tools/builtin/http-fetch.js';
import type { BeforeToolHook } from '../../src/tools/stages/hooks.js';
import type { Tool, ToolContext } from '../../src/tools/types.js';
import { echoTool, fakeTool, group, makeContext, makeHarness, type Harness } from './support.js';

const wrapped = (tool: string, text: string) => `<tool_output tool="${tool}">\n${UNTRUSTED_NOTICE}\n${text}\n</tool_output>`;
const call = (name: string, args: string, id = 'c1') => ({ id, name, arguments: args });

/** A tool with a sensitive parameter that needs approval unless always allowed. */
function loginTool(seen: unknown[] = []): Tool {
  return fakeTool({
    name: 'login',
    readOnly: false,
    parameters: z.object({ user: z.string(), password: z.string() }),
    sensitiveParams: ['password'],
    requiresApproval: () => 'unlessAutoApproved',
    describe: (p: { user: string }) => `Log in as ${p.user}`,
    execute: async (params) => {
      seen.push(params);
      return 'logged in';
    },
  });
}

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function setup(tools: Tool[], overrides: Parameters<typeof makeHarness>[1] = {}) {
  harness = await makeHarness(tools, overrides);
  return harness;
}

describe('pipeline: finding the tool', () => {
  it('answers an unknown tool with the tools this user may use', async () => {
    const h = await setup([echoTool(), fakeTool({ name: 'hidden' })]);
    await h.policy.set('hidden', 'global', 'disable', 'admin');
    const result = await h.pipeline.run(call('foo', '{}'), makeContext());
    expect(result).toMatchObject({ status: 'error', content: 'Error: unknown tool "foo". Available tools: echo.' });
  });
});

describe('pipeline: argument normalisation', () => {
  it('answers invalid JSON with the parser problem', async () => {
    const h = await setup([echoTool()]);
    let parserMessage = '';
    try {
      JSON.parse('{text: 1}');
    } catch (error) {
      parserMessage = (error as Error).message;
    }
    const result = await h.pipeline.run(call('echo', '{text: 1}'), makeContext());
    expect(result.status).toBe('error');
    expect(result.content).toBe(`Error: the arguments for "echo" are not valid JSON (${parserMessage}). Send one JSON object.`);
  });

  it('refuses arguments that are not an object', async () => {
    const h = await setup([echoTool()]);
    const result = await h.pipeline.run(call('echo', '["hi"]'), makeContext());
    expect(result).toMatchObject({ status: 'error', content: 'Error: the arguments for "echo" must be a JSON object, not an array.' });
  });

  it('coerces stringified numbers and treats empty arguments as {}', async () => {
    const h = await setup([echoTool(), fakeTool({ name: 'noargs', execute: async () => 'ran' })]);
    const echoed = await h.pipeline.run(call('echo', '{"text":"ab","times":"3"}'), makeContext());
    expect(echoed).toMatchObject({ status: 'ok', content: wrapped('echo', 'ababab') });
    const empty = await h.pipeline.run(call('noargs', ''), makeContext());
    expect(empty).toMatchObject({ status: 'ok', content: wrapped('noargs', 'ran') });
  });
});

describe('pipeline: approval decision', () => {
  it('asks for approval with redacted arguments and the tool summary', async () => {
    const seen: unknown[] = [];
    const h = await setup([loginTool(seen)]);
    const result = await h.pipeline.run(call('login', '{"user":"ann","password":"hunter2"}'), makeContext());
    expect(result).toMatchObject({
      status: 'needs_approval',
      content: '',
      approval: { allowAlways: true, displayArgs: '{\n  "user": "ann",\n  "password": "[redacted]"\n}', summary: 'Log in as ann' },
    });
    expect(seen).toEqual([]);
  });

  it('refuses a call its tool refuses before asking anyone: no prompt for an http_fetch of a private address', async () => {
    const h = await setup([httpFetchTool({ allowHosts: [], maxBytes: 10_000, timeoutMs: 1_000, resolve: async () => [{ address: '10.0.0.7', family: 4 }] })]);
    const refused = await h.pipeline.run(call('http_fetch', '{"url":"http://intranet.test/secrets"}'), makeContext());
    expect(refused.status).toBe('rejected');
    expect(refused.content).toMatch(/refusing to fetch http:\/\/intranet\.test: intranet\.test \(resolves to 10\.0\.0\.7\) is a private/);
    expect(refused.approval).toBeUndefined();
    const asked = await h.pipeline.run(call('http_fetch', '{"url":"http://8.8.8.8/"}'), makeContext());
    expect(asked.status).toBe('needs_approval');
  });

  it('runs the call once approved, with the real sensitive value', async () => {
    const seen: unknown[] = [];
    const h = await setup([loginTool(seen)]);
    const result = await h.pipeline.run(call('login', '{"user":"ann","password":"hunter2"}'), makeContext(), { approved: true });
    expect(result.status).toBe('ok');
    expect(seen).toEqual([{ user: 'ann', password: 'hunter2' }]);
  });

  it('uses a generic summary and bounds long arguments for display', async () => {
    const h = await setup([echoTool({ requiresApproval: () => 'always' })]);
    const result = await h.pipeline.run(call('echo', JSON.stringify({ text: 'x'.repeat(4000) })), makeContext());
    expect(result.approval?.summary).toBe('Run the tool "echo" with the arguments shown.');
    expect(result.approval?.allowAlways).toBe(false);
    expect(result.approval!.displayArgs.length).toBeLessThan(1600);
    expect(result.approval!.displayArgs).toMatch(/… \(\d+ more characters\)$/);
  });

  it('does not ask about a call whose arguments are invalid', async () => {
    const h = await setup([loginTool()]);
    const result = await h.pipeline.run(call('login', '{"user":"ann"}'), makeContext());
    expect(result).toMatchObject({
      status: 'error',
      content: 'Error: invalid arguments for "login":\n- password: Invalid input: expected string, received undefined',
    });
  });

  it('rejects a tool disabled by the admin even when called directly', async () => {
    const h = await setup([echoTool()]);
    await h.policy.set('echo', 'global', 'disable', 'admin');
    const result = await h.pipeline.run(call('echo', '{"text":"x"}'), makeContext());
    expect(result).toMatchObject({ status: 'rejected', content: 'Error: the tool "echo" is disabled by an administrator here.' });
  });

  it('rejects in a group what would need approval, pointing to a DM', async () => {
    const h = await setup([loginTool()]);
    const result = await h.pipeline.run(call('login', '{"user":"a","password":"b"}'), makeContext({ approval: group }));
    expect(result.status).toBe('rejected');
    expect(result.content).toBe(
      'Error: "login" needs the user\'s approval, which is only possible in a direct message with the bot. ' +
        'Tell the user they can ask again in a direct message, or continue without this tool.',
    );
  });

  it('runs without asking once the user always allows the tool, unless the admin says ask', async () => {
    const h = await setup([loginTool()]);
    await h.permissions.set('telegram:1', 'login', 'alwaysAllow');
    const args = '{"user":"a","password":"b"}';
    expect((await h.pipeline.run(call('login', args), makeContext())).status).toBe('ok');
    await h.policy.set('login', 'telegram:chat:-100', 'ask', 'admin');
    const scoped = await h.pipeline.run(call('login', args), makeContext({ scope: 'telegram:chat:-100' }));
    expect(scoped).toMatchObject({ status: 'needs_approval', approval: { allowAlways: false } });
  });
});

describe('pipeline: rate limit', () => {
  it('refuses calls past the per-minute limit with the wait time', async () => {
    let now = 1_000_000;
    const h = await setup([echoTool({ rateLimit: { perMinute: 2 } })], { now: () => now });
    const args = '{"text":"x"}';
    expect((await h.pipeline.run(call('echo', args), makeContext())).status).toBe('ok');
    now += 15_000;
    expect((await h.pipeline.run(call('echo', args), makeContext())).status).toBe('ok');
    now += 15_000;
    const limited = await h.pipeline.run(call('echo', args), makeContext());
    expect(limited).toMatchObject({ status: 'error', content: 'Error: rate limit for "echo" reached (2 calls per minute). Try again in 30 s.' });
    // Another user has a budget of their own.
    expect((await h.pipeline.run(call('echo', args), makeContext({ userId: 'telegram:2' }))).status).toBe('ok');
    now += 31_000;
    expect((await h.pipeline.run(call('echo', args), makeContext())).status).toBe('ok');
  });
});

describe('pipeline: before-tool hooks', () => {
  it('a hook can reject a call', async () => {
    const hook: BeforeToolHook = (c) => (c.name === 'echo' ? { reject: 'echo is switched off for maintenance.' } : undefined);
    const h = await setup([echoTool()], { hooks: [hook] });
    const result = await h.pipeline.run(call('echo', '{"text":"x"}'), makeContext());
    expect(result).toMatchObject({ status: 'rejected', content: 'Error: "echo" was blocked: echo is switched off for maintenance.' });
  });

  it('a hook sees sensitive values redacted, and they are restored after its rewrite', async () => {
    const seenByHook: unknown[] = [];
    const seenByTool: unknown[] = [];
    const hook: BeforeToolHook = (_c, params) => {
      seenByHook.push(params);
      return { params: { ...params, user: 'rewritten' } };
    };
    const h = await setup([loginTool(seenByTool)], { hooks: [hook] });
    const result = await h.pipeline.run(call('login', '{"user":"ann","password":"hunter2"}'), makeContext(), { approved: true });
    expect(result.status).toBe('ok');
    expect(seenByHook).toEqual([{ user: 'ann', password: '[redacted]' }]);
    expect(seenByTool).toEqual([{ user: 'rewritten', password: 'hunter2' }]);
  });

  it('a rewrite is validated like the model\'s arguments', async () => {
    const h = await setup([echoTool()], { hooks: [() => ({ params: { text: 42 } })] });
    const result = await h.pipeline.run(call('echo', '{"text":"x"}'), makeContext());
    expect(result).toMatchObject({ status: 'error', content: 'Error: invalid arguments for "echo":\n- text: Invalid input: expected string, received number' });
  });

  it('a hook that throws blocks the call', async () => {
    const h = await setup([echoTool()], {
      hooks: [
        () => {
          throw new Error('hook crashed');
        },
      ],
    });
    const result = await h.pipeline.run(call('echo', '{"text":"x"}'), makeContext());
    expect(result).toMatchObject({ status: 'error', content: 'Error: a safety check failed, so "echo" did not run.' });
  });
});

describe('pipeline: validation', () => {
  it('lists each field and its problem', async () => {
    const h = await setup([echoTool()]);
    const result = await h.pipeline.run(call('echo', '{"text": 5, "times": 9}'), makeContext());
    expect(result).toMatchObject({
      status: 'error',
      content:
        'Error: invalid arguments for "echo":\n' +
        '- text: Invalid input: expected string, received number\n' +
        '- times: Too big: expected number to be <=5',
    });
  });
});

describe('pipeline: execution', () => {
  const slowTool = (ms: number, observed: AbortSignal[] = []) =>
    fakeTool({
      name: 'slow',
      timeoutMs: ms,
      execute: (_p, ctx: ToolContext) => {
        observed.push(ctx.signal);
        return new Promise<string>(() => undefined);
      },
    });

  it('gives a ToolError message to the model as written', async () => {
    const h = await setup([fakeTool({ name: 'disk', execute: async () => Promise.reject(new ToolError('the disk is full.')) })]);
    expect(await h.pipeline.run(call('disk', '{}'), makeContext())).toMatchObject({ status: 'error', content: 'Error: the disk is full.' });
  });

  it('reports any other exception as a failure of the tool', async () => {
    const h = await setup([fakeTool({ name: 'boom', execute: async () => Promise.reject(new TypeError('x is undefined')) })]);
    expect(await h.pipeline.run(call('boom', '{}'), makeContext())).toMatchObject({ status: 'error', content: 'Error: "boom" failed: x is undefined' });
  });

  it('stops a tool at its timeout and aborts its signal', async () => {
    const observed: AbortSignal[] = [];
    const h = await setup([slowTool(50, observed)]);
    const result = await h.pipeline.run(call('slow', '{}'), makeContext());
    expect(result).toMatchObject({ status: 'error', content: 'Error: "slow" timed out after 50 ms and was stopped.' });
    expect(observed[0]?.aborted).toBe(true);
  });

  it('aborts the tool when the turn is stopped', async () => {
    const observed: AbortSignal[] = [];
    const h = await setup([slowTool(60_000, observed)]);
    const controller = new AbortController();
    const running = h.pipeline.run(call('slow', '{}'), makeContext({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 30);
    expect(await running).toMatchObject({ status: 'error', content: 'Error: the call to "slow" was cancelled.' });
    expect(observed[0]?.aborted).toBe(true);
  });

  it('does not start a call once the turn is stopped', async () => {
    const observed: AbortSignal[] = [];
    const h = await setup([slowTool(1000, observed)]);
    const controller = new AbortController();
    controller.abort();
    const result = await h.pipeline.run(call('slow', '{}'), makeContext({ signal: controller.signal }));
    expect(result).toMatchObject({ status: 'skipped', content: 'Error: the call to "slow" did not run because the turn was stopped.' });
    expect(observed).toEqual([]);
  });

  it('skips a call when beforeStart says so', async () => {
    const h = await setup([echoTool()]);
    const result = await h.pipeline.run(call('echo', '{"text":"x"}'), makeContext(), { beforeStart: () => 'skipped: the user sent a new message' });
    expect(result).toMatchObject({ status: 'skipped', content: 'skipped: the user sent a new message' });
  });

  it('never throws when a dependency fails', async () => {
    const h = await setup([echoTool()], { permissions: { get: () => Promise.reject(new Error('store offline')), of: () => Promise.reject(new Error('store offline')) } });
    const result = await h.pipeline.run(call('echo', '{"text":"x"}'), makeContext());
    expect(result).toMatchObject({ status: 'error', content: 'Error: "echo" could not be run because of an internal problem.' });
  });
});

describe('pipeline: output sanitising', () => {
  it('redacts secrets and neutralises injection markers in tool output', async () => {
    const out = 'key configured-secret-value\n<|im_start|>system';
    const h = await setup([fakeTool({ name: 'leaky', execute: async () => out })]);
    const result = await h.pipeline.run(call('leaky', '{}'), makeContext());
    expect(result.content).toBe(wrapped('leaky', 'key [redacted]\n‹|im_start|›system'));
  });

  it('truncates long output with a note (config tools.maxOutputChars)', async () => {
    const h = await setup([fakeTool({ name: 'long', execute: async () => 'a'.repeat(10_000) })]);
    const result = await h.pipeline.run(call('long', '{}'), makeContext());
    expect(result.content).toContain('[... output truncated: 8000 of 10000 characters omitted ...]');
  });

  it('redacts secrets in error texts', async () => {
    const h = await setup([fakeTool({ name: 'e', execute: async () => Promise.reject(new ToolError('bad token configured-secret-value')) })]);
    expect((await h.pipeline.run(call('e', '{}'), makeContext())).content).toBe('Error: bad token [redacted]');
  });
});

describe('pipeline: audit', () => {
  it('records each call with redacted arguments, status, duration and time', async () => {
    const h = await setup([loginTool()]);
    await h.pipeline.run(call('login', '{"user":"ann","password":"hunter2"}'), makeContext({ threadKey: 'telegram:1:7' }), { approved: true });
    const [record] = await h.audit.recent(1);
    expect(record).toMatchObject({
      kind: 'call',
      tool: 'login',
      userId: 'telegram:1',
      threadKey: 'telegram:1:7',
      args: '{"user":"ann","password":"[redacted]"}',
      status: 'ok',
    });
    expect(record).toHaveProperty('durationMs');
    expect(JSON.stringify(await h.audit.recent(10))).not.toContain('hunter2');
  });
});

describe('pipeline: audit written behind the result', () => {
  it("hands the result back before its audit record is written, and audited() waits for the thread's records", async () => {
    const written: unknown[] = [];
    let write = () => {};
    const held = new Promise<void>((resolve) => (write = resolve));
    const h = await setup([echoTool()], {
      audit: { record: async (entry) => void (await held, written.push(entry)), recent: async () => [] },
    });
    const results = await h.pipeline.runBatch([call('echo', '{"text":"x"}')], makeContext({ threadKey: 'job:j1' }), { auditBehind: true });
    expect(results[0]).toMatchObject({ status: 'ok', content: wrapped('echo', 'x') });
    expect(written).toEqual([]);
    let audited = false;
    const waiting = h.pipeline.audited('job:j1').then(() => (audited = true));
    // Another thread has nothing written behind: nothing to wait for.
    await h.pipeline.audited('job:other');
    expect(audited).toBe(false);
    write();
    await waiting;
    expect(written).toMatchObject([{ kind: 'call', tool: 'echo', threadKey: 'job:j1', status: 'ok' }]);
  });

  it('waits for the audit record by default', async () => {
    let written = false;
    const h = await setup([echoTool()], {
      audit: { record: async () => void (await new Promise((resolve) => setTimeout(resolve, 20)), (written = true)), recent: async () => [] },
    });
    await h.pipeline.run(call('echo', '{"text":"x"}'), makeContext());
    expect(written).toBe(true);
  });
});

describe('pipeline: audit failure', () => {
  it('a failing audit write does not change the result', async () => {
    const h = await setup([echoTool()], {
      audit: { record: () => Promise.reject(new Error('disk full')), recent: async () => [] },
    });
    const result = await h.pipeline.run(call('echo', '{"text":"x"}'), makeContext());
    expect(result).toMatchObject({ status: 'ok', content: wrapped('echo', 'x') });
  });
});

describe('pipeline: definitions', () => {
  it('lists only the tools this user may see here, as JSON Schema', async () => {
    const h = await setup([echoTool(), fakeTool({ name: 'adminoff' }), fakeTool({ name: 'useroff' })]);
    await h.policy.set('adminoff', 'discord:guild:1', 'disable', 'admin');
    await h.permissions.set('telegram:1', 'useroff', 'disabled');
    const defs = await h.pipeline.definitions({ userId: 'telegram:1', scope: 'discord:guild:1', approval: makeContext().approval });
    expect(defs.map((d) => d.name)).toEqual(['echo']);
    expect(defs[0]!.parameters).toEqual({
      type: 'object',
      properties: { text: { type: 'string', maxLength: 5000 }, times: { type: 'integer', minimum: 1, maximum: 5, default: 1 } },
      required: ['text'],
    });
    const elsewhere = await h.pipeline.definitions({ userId: 'telegram:2', scope: 'global', approval: makeContext().approval });
    expect(elsewhere.map((d) => d.name)).toEqual(['echo', 'adminoff', 'useroff']);
  });
});
