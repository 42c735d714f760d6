/**
 * The data folder of test/fixtures/warehouse-v1.tar.gz: written by pool-export at ab1d11f (schema version 1, numbers as
 * DECIMAL(38,18) and HUGEINT) against the sandbox of this project, by `scripts/make-migration-fixture.ts`, so that the
 * migration test starts from what an earlier version really wrote.
 */

/** The version that wrote the fixture. */
export const FIXTURE_COMMIT = 'ab1d11f';
/** The fixture archive. */
export const FIXTURE_FILE = new URL('../fixtures/warehouse-v1.tar.gz', import.meta.url);
/** The sandbox the fixture was exported from (its `--now` is the pinned one). */
export const FIXTURE_SANDBOX_FLAGS = ['--scale', '300', '--history-days', '3', '--chains', '56', '--no-pumped-prices'];
/** The chain exported. */
export const FIXTURE_CHAIN = 56;
/** Blocks the sandbox advanced between the fixture's two runs (more than the re-read window: the earlier version's incremental run missed null-updatedAt changes; a test starts its sandbox there again). */
export const FIXTURE_ADVANCE = 3000;
