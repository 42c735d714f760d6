import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * Test tiers by file name: `*.test.ts` unit, `*.int.test.ts` integration (real processes), `*.ctr.test.ts` containers,
 * `*.browser.test.ts` browser (headless Chromium).
 * `mutation` is the unit tier without the tests of the sandbox alone (`make mutation` does not mutate the sandbox).
 */
const TIER = process.env.TEST_TIER ?? 'unit';

const INCLUDE: Record<string, string[]> = {
  unit: ['test/unit/**/*.test.ts'],
  mutation: ['test/unit/**/*.test.ts'],
  integration: ['test/integration/**/*.int.test.ts'],
  containers: ['test/containers/**/*.ctr.test.ts'],
  browser: ['test/browser/**/*.browser.test.ts'],
};

const EXCLUDE: Record<string, string[]> = { mutation: ['test/unit/sandbox-*.test.ts'] };

export default defineConfig({
  test: {
    include: INCLUDE[TIER] ?? [],
    exclude: ['**/node_modules/**', ...(EXCLUDE[TIER] ?? [])],
    // One sandbox process shared by the unit tests that only read it (test/unit/pipeline.test.ts).
    globalSetup: TIER === 'unit' || TIER === 'mutation' ? ['test/support/shared-sandbox.ts'] : [],
    testTimeout: 60_000,
    // One limit for every beforeAll, so that the timing reporter names each file's setup against the limit it runs
    // under (no file sets its own, but the containers tier's image build). The slowest setup, lake.int's export of two
    // chains, took 17 s here, and 33 s with the benchmark suite running beside the tests.
    hookTimeout: 120_000,
    pool: 'forks',
    // Vitest runs one file at a time on 2 cores (cores - 1). An integration test mostly waits on the processes it
    // starts (the sandbox, the command line, their time-outs and rate limits), so two files at once: the tier took
    // 421 s instead of 659 s here, each test about 1.5 times as long, every one still under a third of its limit
    // (three at once: 1102 s against 1052-1098 s with two, on 2026-11-28; no gain). The unit tier, two files at once
    // too: 136 s instead of 202 s, every test still under half its limit.
    maxWorkers: TIER === 'integration' || TIER === 'unit' ? 2 : undefined,
    // The default reporter, then each tier's time and its ten slowest tests with their limits.
    reporters: ['default', ['./test/support/timing-reporter.ts', { tier: TIER }]],
    // Containers: no reaper container (no registry to pull it from) and the host network, not Docker's bridge.
    // Integration: the runs read the memory of a host with no control group limit (test/fixtures/hosts/), whatever
    // this machine's is, so that they run under the `duckdbMemoryLimit` such a host gets by default.
    // Every tier: a subgraph's files are read from a closed port on loopback unless a test names the sandbox's IPFS
    // node (test/support/export-check.ts), never from The Graph's IPFS endpoint, the default.
    env: {
      POOL_EXPORT_IPFS_URL: 'http://127.0.0.1:65534/ipfs/',
      ...(TIER === 'containers'
        ? { TESTCONTAINERS_RYUK_DISABLED: 'true', TESTCONTAINERS_HOST_OVERRIDE: '127.0.0.1' }
        : TIER === 'integration'
          ? { POOL_EXPORT_HOST_FILES: resolve('test/fixtures/hosts/no-limit-8gib') }
          : {}),
    },
  },
});
