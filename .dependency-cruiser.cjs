// @ts-check
/**
 * The import structure of src/, checked by `npm run lint` (dependency-cruiser).
 *
 * The floors, from the top:
 * - program: main.ts, cli/, app.ts (builds the deployment and hands features to the runtime), http/;
 * - application: chat/ (runtime, thread runner, turn, commands);
 * - features: jobs/, routines/, mcp/ (they plug into the engine, never into chat);
 * - engine/: the loop, approvals, events, outbox, deliveries, usage, thread records;
 * - cluster/: the Redis implementations of the deployment's interfaces (it implements, nobody above depends on it but app.ts);
 * - channels/ (platform adapters behind the contract in channels/types.ts), tools/, llm/, config/, store/, safety/,
 *   and the shared root files errors.ts and log.ts.
 * Arrows point down. Type-only imports count like any other: a type is a dependency too.
 */

/** Folders of src/ as path patterns. */
const ENGINE = '^src/engine/';
const CHAT = '^src/chat/';
const FEATURES = '^src/(jobs|routines|mcp)/';
const CLUSTER = '^src/cluster/';
const CHANNELS = '^src/channels/';
/** The program's own code: nothing below it imports it. */
const PROGRAM = '^src/(cli|http)/|^src/(app|main)\\.ts$';
/** The floor under the engine: nothing here imports the engine, chat, features, cluster or channels. */
const BASE = '^src/(tools|llm|store|config|safety)/';

/**
 * Two MCP modules that config/ reads while it loads a file: which server environment variables
 * are refused and how `${VAR}` references in server settings expand. Both import nothing of src/
 * but each other (the rule `mcp-config-helpers-are-leaves` keeps them so).
 */
const MCP_CONFIG_HELPERS = '^src/mcp/(environment|secrets)\\.ts$';
/** The shared files at the root of src/ (errors.ts, log.ts...), not the program's app.ts and main.ts. */
const ROOT_FILES = '^src/(?!app\\.ts$|main\\.ts$)[^/]+\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles anywhere in src/: a cycle means two modules are one idea or a type sits on the wrong floor.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'engine-imports-no-application',
      severity: 'error',
      comment: 'The engine serves chat and the features; it imports none of them, nor the cluster (it defines the interfaces cluster/ implements).',
      from: { path: ENGINE },
      to: { path: [CHAT, FEATURES, CLUSTER, PROGRAM] },
    },
    {
      name: 'channels-import-only-the-floor',
      severity: 'error',
      comment:
        'Adapters know the contract in src/channels/types.ts (with its election port) and the floor (config, store, safety, errors, log); ' +
        'the chat consumes their events. They import nothing of the engine, chat, features, cluster, tools or llm.',
      from: { path: CHANNELS },
      to: { path: [ENGINE, CHAT, FEATURES, CLUSTER, PROGRAM, '^src/(tools|llm)/'] },
    },
    {
      name: 'features-import-no-chat',
      severity: 'error',
      comment: 'Jobs, routines and MCP plug into the engine through the feature seam; they never reach into the chat application or the program.',
      from: { path: FEATURES },
      to: { path: [CHAT, PROGRAM] },
    },
    {
      name: 'jobs-and-routines-import-no-cluster',
      severity: 'error',
      comment: 'Jobs and routines get shared state through the deployment interfaces, not from cluster/.',
      from: { path: '^src/(jobs|routines)/' },
      to: { path: CLUSTER },
    },
    {
      name: 'jobs-import-no-routines',
      severity: 'error',
      comment: 'A routine starts jobs; a job knows nothing of routines.',
      from: { path: '^src/jobs/' },
      to: { path: '^src/routines/' },
    },
    {
      name: 'mcp-imports-no-jobs-or-routines',
      severity: 'error',
      comment: 'MCP is a tool source; it knows nothing of the other features.',
      from: { path: '^src/mcp/' },
      to: { path: ['^src/(jobs|routines)/', CLUSTER] },
    },
    {
      name: 'chat-imports-no-features-or-cluster',
      severity: 'error',
      comment: 'The chat runtime gets features through the feature seam and shared state through the deployment object (both built in app.ts); it imports neither.',
      from: { path: CHAT },
      to: { path: [FEATURES, CLUSTER, PROGRAM] },
    },
    {
      name: 'cluster-imports-no-application',
      severity: 'error',
      comment: 'cluster/ implements the deployment interfaces of the engine, channels and tools; it imports nothing of chat, features or the program.',
      from: { path: CLUSTER },
      to: { path: [CHAT, FEATURES, PROGRAM] },
    },
    {
      name: 'floor-imports-nothing-above',
      severity: 'error',
      comment: 'tools, llm, store, config and safety sit under everything else: they import no engine, chat, feature, cluster, channel or program code.',
      from: { path: BASE },
      to: { path: [ENGINE, CHAT, FEATURES, CLUSTER, CHANNELS, PROGRAM], pathNot: MCP_CONFIG_HELPERS },
    },
    {
      name: 'mcp-config-helpers-are-leaves',
      severity: 'error',
      comment: 'config/ may read these two MCP modules only while they import nothing of src/ but each other.',
      from: { path: MCP_CONFIG_HELPERS },
      to: { path: '^src/', pathNot: MCP_CONFIG_HELPERS },
    },
    {
      name: 'config-imports-only-store',
      severity: 'error',
      comment: 'config/ reads files and validates them; of src/ it uses store/ (store URLs), the root files and the two MCP config helpers.',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: ['^src/(config|store)/', ROOT_FILES, MCP_CONFIG_HELPERS] },
    },
    {
      name: 'llm-imports-only-config-and-safety',
      severity: 'error',
      comment: 'The model layer uses config/ (model settings) and safety/ (redaction of what is sent); it keeps nothing and calls no tool.',
      from: { path: '^src/llm/' },
      to: { path: '^src/', pathNot: ['^src/(llm|config|safety)/', ROOT_FILES] },
    },
    {
      name: 'store-imports-only-root-files',
      severity: 'error',
      comment: 'store/ is persistence alone: of src/ it uses the root files (errors, log) only.',
      from: { path: '^src/store/' },
      to: { path: '^src/', pathNot: ['^src/store/', ROOT_FILES] },
    },
    {
      name: 'safety-imports-nothing',
      severity: 'error',
      comment: 'safety/ is the bottom: log.ts redacts with it, so it imports nothing of src/.',
      from: { path: '^src/safety/' },
      to: { path: '^src/', pathNot: '^src/safety/' },
    },
    {
      name: 'root-files-import-only-safety',
      severity: 'error',
      comment: 'The shared root files (errors, log, version, chat kind) are imported from every floor; of src/ they use only safety/ and each other.',
      from: { path: ROOT_FILES },
      to: { path: '^src/', pathNot: ['^src/safety/', ROOT_FILES] },
    },
    {
      name: 'app-is-imported-by-the-program-only',
      severity: 'error',
      comment: 'app.ts assembles everything; only main.ts and the CLI commands start it.',
      from: { path: '^src/', pathNot: '^src/(main\\.ts$|cli/)' },
      to: { path: '^src/app\\.ts$' },
    },
    {
      name: 'app-imports-no-cli',
      severity: 'error',
      comment: 'The CLI starts the app, not the other way round (the version lives in src/version.ts).',
      from: { path: '^src/app\\.ts$' },
      to: { path: '^src/cli/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    // Type-only imports are dependencies too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Packages with an `exports` map (grammy/types, the MCP SDK) resolve as Node resolves them.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
