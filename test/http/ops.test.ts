/**
 * The operations endpoint: /healthz, /readyz (503 with the reason while the
 * bot stops), and /metrics in Prometheus text fed by what the bot did.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { textReply, toolCallReply, type FakeLlmEntry, type FakeLlmRequest } from '../fakes/llm/server.js';
import { scenarioTools, ToolLog } from '../scenarios/tools.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { freePort } from '../support/ports.js';
import { testDm } from '../support/test-channel.js';

let rig: AppRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const ada = { id: 'ada', name: 'Ada' };

function model(request: FakeLlmRequest): FakeLlmEntry {
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return textReply('done');
  if (/calc/.test(String(last.content))) return toolCallReply([{ name: 'calculator', arguments: { expression: '2+2' } }]);
  if (/slow/.test(String(last.content))) return toolCallReply([{ name: 'slow', arguments: { ms: 2_000 } }]);
  return textReply('hi');
}

async function get(port: number, path: string): Promise<{ status: number; body: string; type: string | null }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: await response.text(), type: response.headers.get('content-type') };
}

describe('the operations endpoint', () => {
  it('answers /healthz and /readyz, and counts turns, model requests, tokens and tool calls in /metrics', async () => {
    const port = await freePort();
    rig = await startAppRig({ responder: model, config: { http: { port } } });
    expect(await get(port, '/healthz')).toMatchObject({ status: 200, body: 'ok\n' });
    expect(await get(port, '/readyz')).toMatchObject({ status: 200, body: 'ready\n' });
    const chat = testDm(ada.id);
    rig.platform.channel.userMessage({ chat, sender: ada, text: 'calc please' });
    await rig.platform.waitFor(() => rig!.platform.messagesIn(chat).some((m) => m.text === 'done'), 5_000, 'the answer');
    await rig.app.runtime.idle();
    const metrics = await get(port, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.type).toMatch(/text\/plain/);
    expect(metrics.body).toMatch(/pincer_turns_total\{outcome="response"\} 1/);
    expect(metrics.body).toMatch(/pincer_model_requests_total\{purpose="reply",error="none"\} 2/);
    expect(metrics.body).toMatch(/pincer_tool_calls_total\{tool="calculator",status="ok"\} 1/);
    expect(metrics.body).toMatch(/pincer_model_tokens_total\{direction="input"\} \d+/);
    expect(metrics.body).toMatch(/pincer_channel_events_in_total\{channel="test",type="message"\} 1/);
    expect(metrics.body).toMatch(/pincer_jobs\{state="pending"\} 0/);
    expect(metrics.body).toMatch(/pincer_active_threads \d/);
    expect((await get(port, '/nope')).status).toBe(404);
  });

  it('counts a call to a tool name the model made up under one fixed label, whatever the name', async () => {
    const port = await freePort();
    const invented = ['evil"} 1\npincer_fake_total{x="y', 'zz_made_up_tool_7f3a'];
    rig = await startAppRig({
      responder: (request) => (request.messages.at(-1)!.role === 'tool' ? textReply('done') : toolCallReply(invented.map((name) => ({ name, arguments: {} })))),
      config: { http: { port } },
    });
    const chat = testDm(ada.id);
    rig.platform.channel.userMessage({ chat, sender: ada, text: 'call them' });
    await rig.platform.waitFor(() => rig!.platform.messagesIn(chat).some((m) => m.text === 'done'), 5_000, 'the answer');
    await rig.app.runtime.idle();
    const { body } = await get(port, '/metrics');
    expect(body).toMatch(/pincer_tool_calls_total\{tool="unknown",status="error"\} 2/);
    expect(body).not.toContain('pincer_fake_total');
    expect(body).not.toContain('evil');
    expect(body).not.toContain('zz_made_up_tool');
  });

  it('counts attached files by channel, kind and outcome', async () => {
    const port = await freePort();
    rig = await startAppRig({ config: { http: { port } } });
    const chat = testDm(ada.id);
    // The test channel downloads no files: each one is refused as failed, and counted so.
    const message = rig.platform.channel.userMessage({
      chat,
      sender: ada,
      text: 'look',
      attachments: [
        { kind: 'image', name: 'a.png', mimeType: 'image/png', sizeBytes: 10, fileId: 'a' },
        { kind: 'image', name: 'b.png', mimeType: 'image/png', sizeBytes: 10, fileId: 'b' },
        { kind: 'audio', name: 'v.ogg', mimeType: 'audio/ogg', sizeBytes: 10, fileId: 'v' },
      ],
    });
    await rig.platform.waitFor(() => rig!.platform.messagesIn(chat).some((m) => m.text.startsWith('echo: look')), 5_000, 'the answer');
    expect(message.attachments).toHaveLength(3);
    const { body } = await get(port, '/metrics');
    expect(body).toMatch(/pincer_attachments_total\{channel="test",kind="image",outcome="failed"\} 2/);
    expect(body).toMatch(/pincer_attachments_total\{channel="test",kind="audio",outcome="failed"\} 1/);
  });

  it('says /readyz 503 with the reason while the bot is shutting down', async () => {
    const port = await freePort();
    const log = new ToolLog();
    rig = await startAppRig({ responder: model, tools: scenarioTools(log), config: { http: { port }, agent: { shutdownTimeoutMs: 5_000 } } });
    const chat = testDm(ada.id);
    rig.platform.channel.userMessage({ chat, sender: ada, text: 'slow please' });
    await rig.platform.waitFor(() => log.slowStarted === 1, 5_000, 'the slow tool');
    const stopping = rig.stopApp();
    const ready = await get(port, '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toContain('shutting down');
    await stopping;
  });
});
