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
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
    // Containers: no reaper container (no registry to pull it from) and the host network, not Docker's bridge.
    env:
      TIER === 'containers' ? { TESTCONTAINERS_RYUK_DISABLED: 'true', TESTCONTAINERS_HOST_OVERRIDE: '127.0.0.1' } : {},
  },
});
