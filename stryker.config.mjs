import process from 'node:process';

// Mutation testing of the modules that carry pincer's promises (approvals, claims, leases, redaction,
// the address policy, the loop detectors). Run one module at a time:
//   npm run test:mutation -- --mutate src/safety/secrets.ts
// Without --mutate every module below is mutated (slow: run it module by module on a small machine).
// Each module is tested only by the test files listed for it, so a run stays minutes, not the whole suite.
// Tests that need Redis read PINCER_TEST_REDIS_URL from the environment, as in `npm test`.

/** The app-level tests of approvals: presses on each channel, a restart, the loop guard's question in chat and in jobs. */
const approvalAppTests = [
  'test/agent/approval-press-chat.test.ts',
  'test/agent/approval-restart.test.ts',
  'test/agent/loop-guards.test.ts',
  'test/jobs/loop-guard.test.ts',
  'test/channels/discord/approvals.test.ts',
  'test/channels/slack/approvals.test.ts',
  'test/channels/telegram/approvals.test.ts',
];

/** Module → the test files whose job it is to notice a change in it. */
const testsOf = {
  'src/tools/approval-rule.ts': ['test/tools/approval-rule.test.ts', 'test/jobs/authority.test.ts'],
  'src/engine/approval-flow.ts': ['test/agent/approval-flow.test.ts', ...approvalAppTests],
  'src/engine/approval-book.ts': ['test/agent/approval-book.test.ts', 'test/agent/approval-flow.test.ts', ...approvalAppTests],
  'src/routines/claims.ts': ['test/routines/claims.test.ts', 'test/routines/exactly-once.test.ts'],
  'src/deployment/claims.ts': ['test/routines/claims.test.ts', 'test/routines/exactly-once.test.ts'],
  'src/cluster/claims.ts': ['test/cluster/claims.test.ts', 'test/routines/exactly-once.test.ts'],
  'src/cluster/thread-storage.ts': ['test/cluster/thread-storage.test.ts', 'test/cluster/shared-threads.test.ts', 'test/cluster/lease-fencing.test.ts'],
  'src/cluster/node.ts': ['test/cluster/node.test.ts', 'test/cluster/lease-fencing.test.ts', 'test/cluster/shared-threads.test.ts'],
  'src/safety/secrets.ts': ['test/safety/secrets.test.ts', 'test/safety/secret-patterns.test.ts'],
  'src/tools/builtin/lib/address-policy.ts': ['test/tools/builtin/address-policy.test.ts', 'test/tools/builtin/http-fetch.test.ts'],
  'src/engine/guards/loop-detector.ts': ['test/agent/guards/*.test.ts', 'test/agent/loop-guards.test.ts'],
  'src/engine/guards/call-cycles.ts': ['test/agent/guards/*.test.ts'],
  'src/engine/guards/call-window.ts': ['test/agent/guards/*.test.ts'],
  'src/engine/guards/failure-streak.ts': ['test/agent/guards/*.test.ts'],
  'src/engine/guards/observed-call.ts': ['test/agent/guards/*.test.ts'],
  'src/engine/guards/similar-calls.ts': ['test/agent/guards/*.test.ts'],
};

/** The modules named by `--mutate a,b` on the command line (Stryker applies it too), else all of them. */
function mutatedModules() {
  const at = process.argv.indexOf('--mutate');
  const given = at >= 0 ? process.argv[at + 1] : undefined;
  if (given === undefined) return Object.keys(testsOf);
  return given.split(',').map((f) => f.replace(/:.*$/, '').replace(/^\.\//, ''));
}

const modules = mutatedModules();
const testFiles = [...new Set(modules.flatMap((m) => testsOf[m] ?? []))];
/** Reports and incremental results are kept per run's modules, so one module's run keeps another's. */
const tag = modules.length === 1 ? modules[0].replace(/^src\//, '').replace(/\.ts$/, '').replace(/\//g, '-') : 'all';

process.env.PINCER_MUTATION_TESTS = testFiles.join(',');

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  mutate: Object.keys(testsOf),
  // Not Stryker's `testFiles`: with it, mutants of module-level values are switched on after their module
  // has loaded and always survive. The vitest config below narrows the files instead.
  vitest: { related: false, configFile: 'vitest.mutation.config.ts' },
  checkers: [],
  coverageAnalysis: 'perTest',
  concurrency: 1,
  incremental: true,
  incrementalFile: `reports/mutation/${tag}.incremental.json`,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${tag}.html` },
  jsonReporter: { fileName: `reports/mutation/${tag}.json` },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  timeoutMS: 20_000,
  thresholds: { high: 85, low: 70, break: null },
};
