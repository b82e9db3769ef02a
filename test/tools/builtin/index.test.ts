import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/config/schema.js';
import type { Store } from '../../../src/store/store.js';
import { builtinTools, workspaceDirOf } from '../../../src/tools/builtin/index.js';
import { staticRequirement } from '../../../src/tools/requirement.js';
import { createToolRegistry } from '../../../src/tools/registry.js';
import { openStore, tempDir } from '../support.js';

let store: Store;
let cleanup: () => void;
beforeAll(async () => {
  const temp = tempDir();
  cleanup = temp.cleanup;
  store = await openStore(temp.dir);
});
afterAll(async () => {
  await store.close();
  cleanup();
});

describe('builtinTools', () => {
  it('builds every tool with its approval mode; shell only when enabled', () => {
    const config = ConfigSchema.parse({});
    const modes = builtinTools(config, { store }).map((tool) => [tool.name, staticRequirement(tool), tool.readOnly]);
    expect(modes).toEqual([
      ['time', 'never', true],
      ['calculator', 'never', true],
      ['memory_write', 'never', false],
      ['memory_search', 'never', true],
      ['http_fetch', 'unlessAutoApproved', false],
      ['files_list', 'never', true],
      ['files_read', 'never', true],
      ['files_write', 'unlessAutoApproved', false],
      ['files_send', 'unlessAutoApproved', false],
    ]);
    const enabled = ConfigSchema.parse({ tools: { shell: { enabled: true } } });
    expect(builtinTools(enabled, { store }).map((t) => t.name)).toContain('shell');
  });

  it('registers cleanly: names and schemas are accepted by the registry', () => {
    const registry = createToolRegistry();
    for (const tool of builtinTools(ConfigSchema.parse({ tools: { shell: { enabled: true } } }), { store })) registry.register(tool);
    expect(registry.names()).toHaveLength(10);
  });

  it('puts the workspace under the data folder unless tools.workspaceDir is set', () => {
    expect(workspaceDirOf(ConfigSchema.parse({ dataDir: 'somewhere' }))).toBe(resolve(join('somewhere', 'workspace')));
    expect(workspaceDirOf(ConfigSchema.parse({ tools: { workspaceDir: 'ws' } }))).toBe(resolve('ws'));
  });
});
