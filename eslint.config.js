// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Channels depend on the port (src/channels/types.ts), their shared helpers, log, errors and config types. */
const CHANNEL_BOUNDARIES = [
  { group: ['**/chat/**', '**/engine/**'], message: 'Channels never import the chat application or the engine; they consume the events of src/channels/types.ts.' },
  { group: ['**/tools/**'], message: 'Channels never import tools; what a channel needs crosses src/channels/types.ts.' },
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
  // Layer boundaries at the import line (folders follow the flow channels -> chat and engine -> tools -> llm -> store).
  // The whole import structure (every folder, no cycles) is checked by dependency-cruiser: .dependency-cruiser.mjs.
  // A later block for the same files replaces this rule, so each block lists all its groups.
  {
    files: ['src/channels/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: CHANNEL_BOUNDARIES }] },
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
              message: 'The chat and the engine never import a platform library; platform I/O lives in an adapter under src/channels/.',
            },
            {
              group: ['**/channels/**', '!**/channels/types.js', '!**/channels/command-grammar.js'],
              message: 'The chat and the engine reach the channels only through the port, src/channels/types.ts (and the command grammar it defines commands in).',
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
            { group: ['**/chat/**', '**/engine/**'], message: 'Tools never import the chat or the engine; the engine calls the tools, not the other way round.' },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: { 'no-console': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  // The web console's page runs in the browser; the build scripts in Node.
  {
    files: ['src/http/console/ui/**'],
    languageOptions: { globals: { window: 'readonly', document: 'readonly', fetch: 'readonly', EventSource: 'readonly', setInterval: 'readonly', clearInterval: 'readonly' } },
  },
  {
    files: ['scripts/**'],
    languageOptions: { globals: { console: 'readonly', process: 'readonly' } },
  },
);
