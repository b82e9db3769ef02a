// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Channels depend on the port (src/channels/types.ts), their shared helpers, log, errors and config types. */
const CHANNEL_NOT_TOOLS = {
  group: ['**/tools/**'],
  message: 'Channels never import tools; what a channel needs crosses src/channels/types.ts.',
};
const CHANNEL_BOUNDARIES = [
  { group: ['**/agent/**'], message: 'Channels never import the agent; the agent consumes the events of src/channels/types.ts.' },
  CHANNEL_NOT_TOOLS,
  { group: ['**/llm/**'], message: 'Channels never import the LLM layer; replies reach them as plain text through src/channels/types.ts.' },
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  // Layer boundaries (folders follow the flow channels -> agent -> tools -> llm -> store).
  // A later block for the same files replaces this rule, so each block lists all its groups.
  {
    files: ['src/channels/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: CHANNEL_BOUNDARIES }] },
  },
  {
    // The port re-exports ChatKind, which tools/types.ts declares for the tools' permissions; only that import passes.
    files: ['src/channels/types.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [...CHANNEL_BOUNDARIES.filter((p) => p !== CHANNEL_NOT_TOOLS), { ...CHANNEL_NOT_TOOLS, group: ['**/tools/**', '!../tools/types.js'] }] },
      ],
    },
  },
  {
    files: ['src/chat/**', 'src/engine/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['grammy', 'grammy/**', '@grammyjs/**', 'discord.js', 'discord.js/**', '@discordjs/**', '@slack/**'],
              message: 'The agent never imports a platform library; platform I/O lives in an adapter under src/channels/.',
            },
            {
              group: ['**/channels/**', '!**/channels/types.js', '!**/channels/command-grammar.js'],
              message: 'The agent reaches the channels only through the port, src/channels/types.ts (and the command grammar it defines commands in).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/tools/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/channels/**'], message: 'Tools never import channels; a tool sees the chat only through its ToolContext.' },
            { group: ['**/agent/**'], message: 'Tools never import the agent; the agent calls the tools, not the other way round.' },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: { 'no-console': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
