/**
 * MCP tool servers through the whole app: the published reference server
 * (`@modelcontextprotocol/server-everything`) over stdio and over streamable
 * HTTP, and a small server of ours for a crash, a slow call and a tool list
 * that changes. Its tools go through the same approvals as any tool, a stdio
 * server sees none of pincer's credentials, and /stop cancels a running call.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { freePort } from '../support/ports.js';
import { testGroup } from '../support/test-channel.js';
import { ada, answer, dm, FIXTURE, model, offered, serverStatus, texts } from './chat.js';

const require = createRequire(import.meta.url);
const EVERYTHING = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

let rig: AppRig | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('MCP servers', () => {
  it('the reference server over stdio: its tools are offered as everything__*, ask for approval, and run', async () => {
    process.env.PINCER_TEST_SECRET_VARIABLE = 'sk-should-never-reach-a-server-0000';
    cleanups.push(() => delete process.env.PINCER_TEST_SECRET_VARIABLE);
    rig = await startAppRig({
      responder: model,
      config: { mcp: { servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { GREETING: 'hello' } } } } },
    });
    expect(offered(rig!)).toEqual(expect.arrayContaining(['everything__echo', 'everything__get-sum', 'everything__get-env', 'everything__get-tiny-image']));
    const echoed = await answer(rig!, 'call everything__echo {"message":"hi there"}', /^result: /, true);
    expect(echoed).toMatch(/Echo: hi there/);
    expect(echoed).toMatch(/untrusted/i);
    const image = await answer(rig!, 'call everything__get-tiny-image', /image\/png/, true);
    expect(image).toMatch(/\[image: image\/png, [\d.]+ (bytes|KB)\]/);
    const env = await answer(rig!, 'call everything__get-env', /GREETING/, true);
    expect(env).toContain('hello');
    expect(env).not.toContain('PINCER_TEST_SECRET_VARIABLE');
    expect(env).not.toContain('sk-should-never');
    rig.platform.channel.command({ chat: dm, sender: ada, name: 'mcp', args: '' });
    await rig.platform.waitFor(() => texts(rig!).some((t) => /• everything: ready \(stdio\), \d+ tools/.test(t)), 5_000, 'the /mcp status');
  }, 60_000);

  it('Always allow sticks for an MCP tool, /policy disable hides it from the next request, and a missing command does not stop the start', async () => {
    rig = await startAppRig({
      responder: model,
      config: {
        mcp: {
          servers: {
            everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
            missing: { command: '/nonexistent/mcp-server-binary', startTimeoutMs: 3_000 },
          },
        },
      },
    });
    expect(rig.app.services.registry.sourceStatuses().find((s) => s.name === 'mcp:missing')).toMatchObject({ state: 'failed', tools: 0 });
    rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'call everything__echo {"message":"one"}' });
    const prompt = await rig.platform.waitFor(() => rig!.platform.approvalsIn(dm)[0], 10_000, 'the prompt');
    expect(prompt.actions).toContain('always');
    rig.platform.channel.press(prompt.prompt.id, 'always', ada);
    await rig.platform.waitFor(() => texts(rig!).some((t) => /Echo: one/.test(t)), 10_000, 'the first echo');
    await answer(rig!, 'call everything__echo {"message":"two"}', /Echo: two/);
    expect(rig.platform.approvalsIn(dm)).toHaveLength(1);
    rig.platform.channel.command({ chat: dm, sender: ada, name: 'policy', args: 'disable everything__echo global' });
    await rig.platform.waitFor(() => texts(rig!).some((t) => /everything__echo.*disable/i.test(t)), 5_000, 'the policy confirmation');
    rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'hello' });
    await rig.platform.waitFor(() => rig!.llm.requests.at(-1)?.messages.at(-1)?.content === 'hello', 5_000, 'the next request');
    expect(rig.llm.requests.at(-1)!.tools?.map((t) => t.function.name)).not.toContain('everything__echo');
    expect(rig.llm.requests.at(-1)!.tools?.map((t) => t.function.name)).toContain('everything__get-sum');
  }, 60_000);

  it('in a group, an MCP tool that needs approval is refused without a prompt', async () => {
    rig = await startAppRig({ responder: model, config: { mcp: { servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } } } });
    const group = testGroup('g1');
    rig.platform.channel.userMessage({ chat: group, sender: ada, text: 'call everything__echo {"message":"x"}', mentionsBot: true });
    await rig.platform.waitFor(() => rig!.platform.messagesIn(group).some((m) => /direct message/.test(m.text)), 10_000, 'the refusal');
    expect(rig.platform.approvalsIn(group)).toHaveLength(0);
  }, 60_000);

  it('the reference server over streamable HTTP', async () => {
    const port = await freePort();
    const server: ChildProcess = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { PATH: process.env.PATH, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
    cleanups.push(() => server.kill());
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the HTTP server did not start')), 20_000);
      server.stderr!.on('data', (chunk: Buffer) => {
        if (/listening/i.test(chunk.toString())) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    rig = await startAppRig({ responder: model, config: { mcp: { servers: { web: { url: `http://127.0.0.1:${port}/mcp`, approval: 'never' } } } } });
    expect(offered(rig!)).toContain('web__get-sum');
    const sum = await answer(rig!, 'call web__get-sum {"a":2,"b":3}', /^result: /);
    expect(sum).toMatch(/The sum of 2 and 3 is 5/);
    rig.platform.channel.command({ chat: dm, sender: ada, name: 'mcp', args: '' });
    await rig.platform.waitFor(() => texts(rig!).some((t) => /• web: ready \(streamable-http\)/.test(t)), 5_000, 'the /mcp status');
  }, 60_000);

  describe('our fixture server', () => {
    const fixture = (extra: Record<string, unknown> = {}, env: Record<string, string> = {}) => {
      const dir = mkdtempSync(join(tmpdir(), 'pincer-mcp-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const log = join(dir, 'events.log');
      return {
        log,
        events: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []),
        config: { mcp: { servers: { fix: { command: process.execPath, args: ['--import', 'tsx', FIXTURE], env: { FIXTURE_LOG: log, ...env }, approval: 'never' as const, ...extra } } } },
      };
    };

    it('a crash withdraws its tools; the server is restarted and they come back', async () => {
      const f = fixture();
      rig = await startAppRig({ responder: model, config: f.config });
      expect(offered(rig!)).toContain('fix__slow');
      await answer(rig!, 'call fix__crash', /^result: /);
      await rig.platform.waitFor(() => !offered(rig!).includes('fix__slow'), 10_000, 'the tools withdrawn');
      // The bot keeps answering meanwhile.
      await answer(rig!, 'just chatting', /^ok$/);
      expect(rig.app.services.registry.sourceStatuses().find((s) => s.name === 'mcp:fix')).toMatchObject({ state: expect.stringMatching(/failed|starting/) });
      await rig.platform.waitFor(() => offered(rig!).includes('fix__slow'), 15_000, 'the tools back after the restart');
      expect(f.events().filter((e) => e === 'started').length).toBeGreaterThanOrEqual(2);
    }, 60_000);

    it('/mcp restart NAME (owners) starts a new server process and lists its tools again; a group admin is refused', async () => {
      const f = fixture();
      rig = await startAppRig({ responder: model, config: f.config });
      await answer(rig!, 'call fix__add_tool', /added the tool/);
      await rig.platform.waitFor(() => offered(rig!).includes('fix__added'), 5_000, 'the added tool');
      const group = testGroup('g-mcp');
      const bob = { id: 'bob', name: 'Bob' };
      rig.platform.chatAdmins.set(group.chatId, new Set([bob.id]));
      rig.platform.channel.command({ chat: group, sender: bob, name: 'mcp', args: 'restart fix' });
      await rig.platform.waitFor(() => rig!.platform.messagesIn(group).some((m) => /Only an owner/.test(m.text)), 5_000, 'the refusal');
      expect(f.events().filter((e) => e === 'started')).toHaveLength(1);
      rig.platform.channel.command({ chat: dm, sender: ada, name: 'mcp', args: 'restart nosuch' });
      await rig.platform.waitFor(() => texts(rig!).some((t) => /No MCP server is called "nosuch"/.test(t)), 5_000, 'the unknown server');
      rig.platform.channel.command({ chat: dm, sender: ada, name: 'mcp', args: 'restart fix' });
      await rig.platform.waitFor(() => texts(rig!).some((t) => /^Restarted fix: ready, 4 tools\.$/.test(t)), 15_000, 'the restart');
      // A new process: the tool added at run time in the old one is gone, the configured ones are back.
      expect(f.events().filter((e) => e === 'started')).toHaveLength(2);
      expect(offered(rig)).not.toContain('fix__added');
      expect(offered(rig)).toContain('fix__slow');
      expect(serverStatus(rig, 'fix')).toMatchObject({ state: 'ready', tools: 4 });
    }, 60_000);

    it('a call past the server\'s time limit fails with a clear result', async () => {
      const f = fixture({ timeoutMs: 500 });
      rig = await startAppRig({ responder: model, config: f.config });
      const slow = await answer(rig!, 'call fix__slow {"ms":5000}', /^result: /);
      expect(slow).toMatch(/time|timed out/i);
      expect(slow).not.toMatch(/waited 5000 ms/);
    }, 60_000);

    it('a new tool announced with tools/list_changed is offered in the next model request', async () => {
      const f = fixture();
      rig = await startAppRig({ responder: model, config: f.config });
      expect(offered(rig!)).not.toContain('fix__added');
      await answer(rig!, 'call fix__add_tool', /added the tool/);
      await rig.platform.waitFor(() => offered(rig!).includes('fix__added'), 5_000, 'the new tool');
      const ran = await answer(rig!, 'call fix__added', /the added tool ran/);
      expect(ran).toContain('the added tool ran');
      expect(rig.llm.requests.at(-2)!.tools?.map((t) => t.function.name)).toContain('fix__added');
    }, 60_000);

    it('a tool list changed during a call is offered in the very next model request, even when the server lists slowly', async () => {
      const f = fixture({}, { FIXTURE_SLOW_LIST: '300' });
      rig = await startAppRig({ responder: model, config: f.config });
      expect(offered(rig!)).not.toContain('fix__added');
      // add_tool announces the change just before its result, and the server takes 300 ms to list its tools again.
      await answer(rig!, 'call fix__add_tool', /added the tool/);
      const [asked, afterCall] = rig.llm.requests.slice(-2).map((request) => request.tools?.map((t) => t.function.name) ?? []);
      expect(asked).not.toContain('fix__added');
      expect(afterCall).toContain('fix__added');
    }, 60_000);

    it('a listing slower than the call\'s time limit does not fail the call; the new tool comes once listed', async () => {
      const f = fixture({ timeoutMs: 1_000 }, { FIXTURE_SLOW_LIST: '4000' });
      rig = await startAppRig({ responder: model, config: f.config });
      const added = await answer(rig!, 'call fix__add_tool', /^result: /);
      expect(added).toMatch(/added the tool "added"/);
      expect(added).not.toMatch(/time|fail|error/i);
      expect(rig.llm.requests.at(-1)!.tools?.map((t) => t.function.name)).not.toContain('fix__added');
      await rig.platform.waitFor(() => offered(rig!).includes('fix__added'), 10_000, 'the new tool, once listed');
    }, 60_000);

    it('/stop cancels a running call with the protocol\'s cancellation', async () => {
      const f = fixture();
      rig = await startAppRig({ responder: model, config: f.config });
      rig.platform.channel.userMessage({ chat: dm, sender: ada, text: 'call fix__slow {"ms":30000}' });
      // The server's handler has begun: /stop now meets a running call, not one still on its way.
      await rig.platform.waitFor(() => f.events().includes('began 30000'), 10_000, 'the call to begin on the server');
      rig.platform.channel.command({ chat: dm, sender: ada, name: 'stop', args: '' });
      // Well inside the call's 30 s: the turn ends because of /stop, not because the call finished.
      await rig.platform.waitFor(() => texts(rig!).some((t) => /stopped/i.test(t)), 10_000, 'the turn to end');
      await rig.platform.waitFor(() => f.events().includes('cancelled 30000'), 10_000, 'the server told of the cancellation');
      await rig.app.runtime.idle();
      expect(texts(rig).some((t) => t.includes('waited 30000 ms'))).toBe(false);
    }, 60_000);
  });

  it('refuses loader variables in a server\'s environment at config load', () => {
    expect(() => parseConfig({ mcp: { servers: { bad: { command: 'x', env: { NODE_OPTIONS: '--require evil.js' } } } } })).toThrow(/NODE_OPTIONS changes how the server loads code/);
    expect(() => parseConfig({ mcp: { servers: { both: { command: 'x', url: 'http://127.0.0.1:1/mcp' } } } })).toThrow(/either command .* or url/);
  });
});
