import { afterEach, describe, expect, it } from 'vitest';
import { createToolRegistry } from '../../src/tools/registry.js';
import { StaticToolSource, type SourceStatus } from '../../src/tools/source.js';
import type { Tool } from '../../src/tools/types.js';
import { textReply, toolCallReply, type FakeLlmRequest } from '../fakes/llm/server.js';
import { startAppRig, type AppRig } from '../support/app-rig.js';
import { testDm } from '../support/test-channel.js';
import { fakeTool } from './support.js';

/** A source whose list changes at run time and that can fail to start, as an MCP server's does. */
class DynamicSource extends StaticToolSource {
  state: SourceStatus['state'] = 'stopped';
  failStart = false;

  override async start(): Promise<void> {
    if (this.failStart) {
      this.state = 'failed';
      throw new Error('server did not start');
    }
    this.state = 'ready';
  }
  override async stop(): Promise<void> {
    this.state = 'stopped';
    this.replace([]);
  }
  override status(): SourceStatus {
    return { state: this.state, tools: this.tools().length };
  }
  set(tools: Tool[]): void {
    this.replace(tools);
  }
}

describe('tool sources in the registry', () => {
  it('gathers the tools of every source, first source first, and follows a source whose list changes', () => {
    const registry = createToolRegistry();
    const dynamic = new DynamicSource('mcp:files');
    registry.addSource(new StaticToolSource('builtin', [fakeTool({ name: 'a' })]));
    registry.addSource(dynamic);
    expect(registry.names()).toEqual(['a']);
    const before = registry.revision();
    dynamic.set([fakeTool({ name: 'files__read' })]);
    expect(registry.revision()).not.toBe(before);
    expect(registry.names()).toEqual(['a', 'files__read']);
    expect(registry.get('files__read')?.source).toBe('mcp:files');
    dynamic.set([]);
    expect(registry.get('files__read')).toBeUndefined();
  });

  it('keeps the first source\'s tool on a name clash, and leaves out invalid tools of a source', () => {
    const registry = createToolRegistry();
    const first = fakeTool({ name: 'search', execute: async () => 'first' });
    registry.addSource(new StaticToolSource('builtin', [first]));
    registry.addSource(new StaticToolSource('other', [fakeTool({ name: 'search' }), fakeTool({ name: 'bad name' }), fakeTool({ name: 'ok' })]));
    expect(registry.names()).toEqual(['search', 'ok']);
    expect(registry.get('search')?.tool).toBe(first);
    expect(() => registry.addSource(new StaticToolSource('other'))).toThrow(/added twice/);
  });

  it('starts every source; one that fails offers no tools and the others run', async () => {
    const registry = createToolRegistry();
    const broken = new DynamicSource('mcp:broken');
    broken.failStart = true;
    const working = new DynamicSource('mcp:working');
    registry.addSource(broken);
    registry.addSource(working);
    await registry.start();
    working.set([fakeTool({ name: 'w' })]);
    expect(registry.names()).toEqual(['w']);
    expect(registry.sourceStatuses()).toEqual([
      { name: 'mcp:broken', state: 'failed', tools: 0 },
      { name: 'mcp:working', state: 'ready', tools: 1 },
    ]);
    await registry.stop();
    expect(registry.names()).toEqual([]);
  });
});

describe('a source that changes during a turn', () => {
  let rig: AppRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it('offers the new list on the next model request of the same turn', async () => {
    const dynamic = new DynamicSource('mcp:lab');
    const unlock = fakeTool({
      name: 'unlock',
      execute: async () => {
        dynamic.set([fakeTool({ name: 'lab__secret' })]);
        return 'unlocked';
      },
    });
    const responder = (request: FakeLlmRequest) => (request.messages.at(-1)?.role === 'tool' ? textReply('done') : toolCallReply([{ name: 'unlock', arguments: {} }]));
    rig = await startAppRig({ responder, tools: [unlock], toolSources: [dynamic] });
    const { platform, llm } = rig;
    const chat = testDm('ada');
    platform.channel.userMessage({ chat, sender: { id: 'ada', name: 'Ada' }, text: 'open the lab' });
    await platform.waitFor(() => platform.messagesIn(chat)[0], 10_000, 'the answer');
    const offered = llm.requests.map((request) => (request.tools ?? []).map((tool) => tool.function.name));
    expect(offered[0]).not.toContain('lab__secret');
    expect(offered[1]).toContain('lab__secret');
  });
});
