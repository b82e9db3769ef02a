/**
 * What a server's configuration changes for the user and the model, through
 * the whole app with an HTTP server of the published SDK: `include` and
 * `exclude` decide the tools offered (and an excluded tool never reaches the
 * server), `headers` go with every request, `approval` and its per-tool
 * overrides decide which calls ask, and `rateLimit` bounds calls per user.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpMcp, type HttpMcp } from '../fakes/mcp/http.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { ada, answer, dm, lastToolResult, model, offered, texts } from './chat.js';

let rig: AppRig | undefined;
let web: HttpMcp | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  await web?.close();
  web = undefined;
});

/** The tools the model was offered in its latest request. */
function offeredToModel(app: AppRig): string[] {
  return app.llm.requests.at(-1)?.tools?.map((tool) => tool.function.name) ?? [];
}

/** The names of the tools whose handler started on the server, in order. */
function startedCalls(server: HttpMcp): string[] {
  const started: string[] = [];
  server.calls.on('started', (name: string) => started.push(name));
  return started;
}

describe('an MCP server\'s configuration', () => {
  it('include and exclude decide the tools the model is offered; an excluded tool called anyway never reaches the server', async () => {
    web = await startHttpMcp();
    const started = startedCalls(web);
    const server = { url: web.url, approval: 'never' as const };
    rig = await startAppRig({
      responder: model,
      config: { mcp: { servers: { picked: { ...server, include: ['alpha', 'say'], exclude: ['say'] }, most: { ...server, exclude: ['beta'] } } } },
    });
    expect(offered(rig).filter((name) => name.startsWith('picked__'))).toEqual(['picked__alpha']);
    expect(offered(rig).filter((name) => name.startsWith('most__')).sort()).toEqual(['most__alpha', 'most__gamma', 'most__leak', 'most__say']);

    await answer(rig, 'call picked__alpha', /ran alpha/);
    expect(offeredToModel(rig)).toEqual(expect.arrayContaining(['picked__alpha', 'most__alpha', 'most__gamma']));
    expect(offeredToModel(rig)).not.toContain('picked__beta');
    expect(offeredToModel(rig)).not.toContain('picked__say');
    expect(offeredToModel(rig)).not.toContain('most__beta');

    for (const excluded of ['picked__beta', 'picked__say', 'most__beta']) {
      await answer(rig, `call ${excluded}`, new RegExp(`unknown tool "${excluded}"`));
    }
    expect(started).toEqual(['alpha']);
  }, 60_000);

  it('headers go with every request to the server, the tool call\'s included', async () => {
    web = await startHttpMcp();
    rig = await startAppRig({
      responder: model,
      config: { mcp: { servers: { web: { url: web.url, approval: 'never', headers: { 'X-Tenant': 'blue-tenant', 'User-Agent': 'pincer-test-agent' } } } } },
    });
    const before = web.requests.length;
    await answer(rig, 'call web__alpha', /ran alpha/);
    expect(web.requests.length).toBeGreaterThan(before);
    expect(web.requests.length).toBeGreaterThanOrEqual(3);
    for (const request of web.requests) expect(request.headers).toMatchObject({ 'x-tenant': 'blue-tenant', 'user-agent': 'pincer-test-agent' });
  }, 60_000);

  it('approval: always asks at every call and never offers Always allow; the server is called only once approved', async () => {
    web = await startHttpMcp();
    const started = startedCalls(web);
    rig = await startAppRig({ responder: model, config: { mcp: { servers: { guarded: { url: web.url, approval: 'always' } } } } });
    for (const [round, word] of ['apple-71', 'pear-72'].entries()) {
      rig.platform.channel.userMessage({ chat: dm, sender: ada, text: `call guarded__say {"text":"${word}"}` });
      const prompt = await rig.platform.waitFor(() => rig!.platform.approvalsIn(dm)[round], 10_000, `prompt ${round + 1}`);
      expect(prompt.actions).not.toContain('always');
      expect(started).toHaveLength(round);
      rig.platform.channel.press(prompt.prompt.id, 'approve', ada);
      await rig.platform.waitFor(() => texts(rig!).some((t) => t.startsWith('result: ') && t.includes(word)), 10_000, `the answer ${word}`);
    }
    expect(started).toEqual(['say', 'say']);
  }, 60_000);

  it('a per-tool approval overrides the server\'s, both ways', async () => {
    web = await startHttpMcp();
    rig = await startAppRig({
      responder: model,
      config: {
        mcp: {
          servers: {
            free: { url: web.url, approval: 'never', tools: { beta: { approval: 'always' } } },
            strict: { url: web.url, approval: 'always', tools: { gamma: { approval: 'never' } } },
          },
        },
      },
    });
    await answer(rig, 'call free__alpha', /ran alpha/);
    await answer(rig, 'call strict__gamma', /ran gamma/);
    expect(rig.platform.approvalsIn(dm)).toHaveLength(0);
    await answer(rig, 'call free__beta', /ran beta/, true);
    expect(rig.platform.approvalsIn(dm)).toHaveLength(1);
    await answer(rig, 'call strict__alpha', /ran alpha/, true);
    expect(rig.platform.approvalsIn(dm)).toHaveLength(2);
    expect(rig.platform.approvalsIn(dm).map((a) => a.actions.includes('always'))).toEqual([false, false]);
  }, 60_000);

  it('rateLimit bounds a user\'s calls of each tool; a per-tool limit overrides the server\'s', async () => {
    web = await startHttpMcp();
    const started = startedCalls(web);
    rig = await startAppRig({
      responder: model,
      config: { mcp: { servers: { lim: { url: web.url, approval: 'never', rateLimit: { perMinute: 2 }, tools: { beta: { rateLimit: { perMinute: 1 } } } } } } },
    });
    for (const word of ['apple-71', 'pear-72']) await answer(rig, `call lim__say {"text":"${word}"}`, new RegExp(`result: .*${word}`));
    const refused = await answer(rig, 'call lim__say {"text":"plum-73"}', /rate limit/);
    expect(refused).toMatch(/rate limit for "lim__say" reached \(2 calls per minute\)\. Try again in \d+ s\./);
    expect(lastToolResult(rig)).not.toContain('plum-73');
    await answer(rig, 'call lim__beta', /ran beta/);
    await answer(rig, 'call lim__beta', /rate limit for "lim__beta" reached \(1 calls per minute\)/);
    // Another tool of the server counts on its own.
    await answer(rig, 'call lim__alpha', /ran alpha/);
    expect(started).toEqual(['say', 'say', 'beta', 'alpha']);
  }, 60_000);
});
