// @ts-check
/**
 * The import structure of src/, checked by `npm run lint` (dependency-cruiser); the floors are
 * drawn in docs/architecture.md. From the top:
 * - program: main.ts and cli/; composition: app.ts (builds everything, chooses the deployment);
 * - application and features: chat/; jobs/, routines/, mcp/ (they plug into the engine's feature
 *   seam, never into chat); http/;
 * - deployment: deployment/ (the interfaces and the one-process implementation) and cluster/ (the
 *   same on Redis, wired in by app.ts alone);
 * - engine/: the loop, approvals, events, outbox, deliveries, usage, thread records;
 * - edges: channels/ (adapters behind the contract in channels/types.ts), tools/, llm/, config/,
 *   store/, safety/, and the shared files at the root of src/ (errors.ts, log.ts, version.ts...).
 * Arrows point down. Type-only imports count like any other: a type is a dependency too.
 * Each rule says what one floor may not import; a wrong import breaks one rule (and no-circular too
 * when it closes a cycle).
 */

const CHAT = '^src/chat/';
const FEATURES = '^src/(jobs|routines|mcp)/';
const HTTP = '^src/http/';
const DEPLOYMENT = '^src/deployment/';
const CLUSTER = '^src/cluster/';
const ENGINE = '^src/engine/';
const CHANNELS = '^src/channels/';
/** The shared files at the root of src/, not the program's app.ts and main.ts. */
const ROOT_FILES = '^src/(?!app\\.ts$|main\\.ts$)[^/]+\\.ts$';
/** Everything above the edges but cluster/ and the program, which rules of their own keep to themselves. */
const ABOVE_THE_EDGES = [CHAT, FEATURES, HTTP, DEPLOYMENT, ENGINE];

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles anywhere in src/: a cycle means two modules are one idea, or a type sits on the wrong floor.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'only-app-wires-the-cluster',
      severity: 'error',
      comment:
        'cluster/ implements the deployment interfaces on Redis; app.ts chooses it once. Nothing else imports it: ' +
        'the engine, chat, features and channels get an election, storage or claims through an interface.',
      from: { path: '^src/', pathNot: ['^src/app\\.ts$', CLUSTER] },
      to: { path: CLUSTER },
    },
    {
      name: 'app-is-imported-by-the-program-only',
      severity: 'error',
      comment: 'app.ts assembles everything; only main.ts and the CLI commands start it.',
      from: { path: '^src/', pathNot: '^src/(main\\.ts$|cli/)' },
      to: { path: '^src/app\\.ts$' },
    },
    {
      name: 'only-the-program-imports-the-cli',
      severity: 'error',
      comment: 'main.ts and the CLI start the app, not the other way round (the version lives in src/version.ts).',
      from: { path: '^src/', pathNot: '^src/(main\\.ts$|cli/)' },
      to: { path: '^src/(cli/|main\\.ts$)' },
    },
    {
      name: 'chat-imports-no-feature',
      severity: 'error',
      comment: 'The chat runtime gets the features through the feature seam (src/engine/feature.ts), built and handed in by app.ts; it imports none.',
      from: { path: CHAT },
      to: { path: [FEATURES, HTTP] },
    },
    {
      name: 'features-import-no-chat',
      severity: 'error',
      comment: 'Jobs, routines and MCP plug into the engine through the feature seam; they never reach into the chat application.',
      from: { path: FEATURES },
      to: { path: [CHAT, HTTP] },
    },
    {
      name: 'jobs-import-no-routines',
      severity: 'error',
      comment: 'A routine starts jobs; a job knows nothing of routines.',
      from: { path: '^src/jobs/' },
      to: { path: '^src/routines/' },
    },
    {
      name: 'mcp-imports-no-other-feature',
      severity: 'error',
      comment: 'MCP is a tool source; it knows nothing of jobs or routines.',
      from: { path: '^src/mcp/' },
      to: { path: '^src/(jobs|routines)/' },
    },
    {
      name: 'deployment-serves-the-application',
      severity: 'error',
      comment: 'The deployment interfaces and their implementations sit under chat and the features: they import neither.',
      from: { path: [DEPLOYMENT, CLUSTER] },
      to: { path: [CHAT, FEATURES, HTTP] },
    },
    {
      name: 'engine-imports-nothing-above-it',
      severity: 'error',
      comment: 'The engine serves chat and the features; it imports none of them, nor the deployment (its interfaces use the engine, not the other way round).',
      from: { path: ENGINE },
      to: { path: [CHAT, FEATURES, HTTP, DEPLOYMENT] },
    },
    {
      name: 'channels-import-only-config-and-root-files',
      severity: 'error',
      comment:
        'An adapter knows the channel contract (types.ts, with its election port), its config and the root files (errors, log); ' +
        'the chat consumes its events. It imports nothing of the engine, chat, features, deployment, tools, llm, store or safety. ' +
        'In particular, channels/types.ts imports nothing from tools/.',
      from: { path: CHANNELS },
      to: { path: [...ABOVE_THE_EDGES, '^src/(tools|llm|store|safety)/'] },
    },
    {
      name: 'edges-import-nothing-above-them',
      severity: 'error',
      comment: 'tools, llm, store, config and safety sit under everything else: no engine, chat, feature, deployment, channel or program code.',
      from: { path: '^src/(tools|llm|store|config|safety)/' },
      to: { path: [...ABOVE_THE_EDGES, CHANNELS] },
    },
    {
      name: 'tools-are-the-top-edge',
      severity: 'error',
      comment: 'Tools use llm, config, store and safety; none of those uses a tool.',
      from: { path: '^src/(llm|config|store)/' },
      to: { path: '^src/tools/' },
    },
    {
      name: 'llm-imports-only-config-and-safety',
      severity: 'error',
      comment: 'The model layer uses its config and may redact with safety/; it keeps nothing (no store).',
      from: { path: '^src/llm/' },
      to: { path: '^src/store/' },
    },
    {
      name: 'config-imports-only-store',
      severity: 'error',
      comment: 'config/ reads and validates files; of the edges it uses store/ (store URLs) alone.',
      from: { path: '^src/config/' },
      to: { path: '^src/(llm|safety)/' },
    },
    {
      name: 'store-imports-only-root-files',
      severity: 'error',
      comment: 'store/ is persistence alone: of src/ it uses the root files (errors, log) only.',
      from: { path: '^src/store/' },
      to: { path: '^src/(llm|config|safety)/' },
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
