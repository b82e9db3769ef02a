/**
 * An MCP call from the transport to the audit trail, through the whole app
 * with an HTTP server of the published SDK: a server that speaks only the
 * older SSE transport is reached by falling back to it (with the configured
 * headers); a result is redacted and truncated before the model reads it; and
 * each call leaves an audit record with redacted arguments.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAuditLog, type AuditRecord } from '../../src/tools/audit.js';
import { toolCallReply, type FakeLlmRequest } from '../fakes/llm/server.js';
import { startHttpMcp, type HttpMcp } from '../fakes/mcp/http.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { ada, answer, dm, lastToolResult, model, offered, serverStatus, texts } from './chat.js';

let rig: AppRig | undefined;
let web: HttpMcp | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  await web?.close();
  web = undefined;
});

/** An audit record of a tool call. */
type CallRecord = Extract<AuditRecord, { kind: 'call' }>;

/** A key of the kind the redactor knows by its shape (a GitHub token). */
const SHAPED_SECRET = `ghp_${'Q7w'.repeat(12)}`;
/** A configured credential with no known shape: redacted because it is configured. */
const CONFIGURED_SECRET = 'llm-key-unshaped-5d81c3a0f9';

/** The files under `dir` whose bytes hold `text`. */
function filesHolding(dir: string, text: string): string[] {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
  return files.map((entry) => join(entry.parentPath, entry.name)).filter((file) => readFileSync(file).includes(text));
}

/** The audit records of calls of `tool`, oldest first, once `count` of them are written. */
async function auditedCalls(app: AppRig, tool: string, count: number): Promise<CallRecord[]> {
  const audit = createAuditLog(app.app.store, { log: app.app.services.log });
  const deadline = Date.now() + 5_000;
  for (;;) {
    const calls = (await audit.recent(50)).filter((record): record is CallRecord => record.kind === 'call' && record.tool === tool).reverse();
    if (calls.length >= count || Date.now() > deadline) return calls;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('an MCP call', () => {
  it('reaches a server that speaks only SSE by falling back to it, with the configured headers', async () => {
    web = await startHttpMcp({ transport: 'sse' });
    rig = await startAppRig({ responder: model, config: { mcp: { servers: { old: { url: web.url, approval: 'never', headers: { 'X-Tenant': 'blue-tenant' } } } } } });
    expect(serverStatus(rig, 'old')).toMatchObject({ state: 'ready', transport: 'sse' });
    expect(offered(rig)).toEqual(expect.arrayContaining(['old__alpha', 'old__say']));
    const said = await answer(rig, 'call old__say {"text":"over-sse-41"}', /^result: /);
    expect(said).toContain('over-sse-41');
    rig.platform.channel.command({ chat: dm, sender: ada, name: 'mcp', args: '' });
    await rig.platform.waitFor(() => texts(rig!).some((t) => /• old: ready \(sse\), 5 tools/.test(t)), 5_000, 'the /mcp status');

    const seen = web.requests.map((request) => `${request.method} ${request.path}`);
    // Streamable HTTP was tried first and refused; then the event stream and its message endpoint.
    expect(seen[0]).toBe('POST /mcp');
    expect(seen).toContain('GET /mcp');
    expect(seen).toContain('POST /messages');
    for (const request of web.requests) expect(request.headers['x-tenant']).toBe('blue-tenant');
  }, 60_000);

  it('has a secret in its result redacted before the model or the user sees it', async () => {
    web = await startHttpMcp({ secrets: [SHAPED_SECRET, CONFIGURED_SECRET] });
    rig = await startAppRig({ responder: model, config: { llm: { apiKey: CONFIGURED_SECRET }, mcp: { servers: { web: { url: web.url, approval: 'never' } } } } });
    const reply = await answer(rig, 'call web__leak', /the key is/);
    const read = lastToolResult(rig);
    expect(read).toMatch(/the key is \[redacted\]\.\nthe key is \[redacted\]\./);
    for (const secret of [SHAPED_SECRET, CONFIGURED_SECRET]) {
      expect(JSON.stringify(rig.llm.requests)).not.toContain(secret);
      expect(reply).not.toContain(secret);
    }
    expect(reply).toContain('the key is [redacted]');
    // Nor is it kept in the conversation's history, which later requests send again.
    await rig.app.runtime.idle();
    for (const secret of [SHAPED_SECRET, CONFIGURED_SECRET]) expect(filesHolding(rig.dir, secret)).toEqual([]);
  }, 60_000);

  it('has an oversized result truncated with a note, keeping its start and end', async () => {
    web = await startHttpMcp();
    rig = await startAppRig({ responder: model, config: { tools: { maxOutputChars: 2_000 }, mcp: { servers: { web: { url: web.url, approval: 'never' } } } } });
    const args = { head: 'START-OF-RESULT ', text: '0123456789', times: 2_000, tail: ' END-OF-RESULT' };
    const reply = await answer(rig, `call web__say ${JSON.stringify(args)}`, /^result: /);
    const read = lastToolResult(rig);
    const total = args.head.length + args.text.length * args.times + args.tail.length;
    expect(read).toContain('START-OF-RESULT');
    expect(read).toContain('END-OF-RESULT');
    expect(read).toContain(`[... output truncated: ${total - 2_000} of ${total} characters omitted ...]`);
    expect(read.length).toBeLessThan(2_600);
    expect(reply).toMatch(/output truncated/);
  }, 60_000);

  it('leaves an audit record: the tool, the person, the outcome and the arguments with secrets redacted', async () => {
    web = await startHttpMcp();
    // The model itself writes the secret into the arguments (a user's text reaches the model redacted already).
    const leaky = (request: FakeLlmRequest) =>
      request.messages.at(-1)?.content === 'audit this' ? toolCallReply([{ name: 'web__say', arguments: { text: `audited ${CONFIGURED_SECRET}` } }]) : model(request);
    rig = await startAppRig({
      responder: leaky,
      config: { llm: { apiKey: CONFIGURED_SECRET }, mcp: { servers: { web: { url: web.url, approval: 'never', tools: { say: { rateLimit: { perMinute: 1 } } } } } } },
    });
    await answer(rig, 'audit this', /^result: .*audited/);
    await answer(rig, 'call web__say {"text":"second"}', /rate limit/);
    const calls = await auditedCalls(rig, 'web__say', 2);
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ kind: 'call', tool: 'web__say', userId: expect.stringContaining(ada.id), status: 'ok', args: expect.stringContaining('audited [redacted]') });
    expect(calls[0]!.args).not.toContain(CONFIGURED_SECRET);
    expect(calls[1]).toMatchObject({ tool: 'web__say', status: 'error', args: expect.stringContaining('second') });
  }, 60_000);
});
