/**
 * Data folders written by earlier versions of pool-export against the sandbox of this project, by
 * `scripts/make-migration-fixture.ts`, so that the migration tests start from what those versions really wrote:
 * - test/fixtures/warehouse-v1.tar.gz: written at ab1d11f (warehouse schema version 1, numbers as DECIMAL(38,18) and
 *   HUGEINT; lake layout 1), then compacted;
 * - test/fixtures/lake-v1.tar.gz: written at 67fd1e4 (warehouse schema version 2; lake layout 1: day partitions, a part
 *   file per run for snapshots, the list and mutable history, `_text` columns), not compacted.
 */

/** A fixture: the commit that wrote it, its archive, and whether `compact` ran last. */
export interface Fixture {
  readonly commit: string;
  readonly file: URL;
  readonly compact: boolean;
}

export const FIXTURES = {
  warehouse: { commit: 'ab1d11f', file: new URL('../fixtures/warehouse-v1.tar.gz', import.meta.url), compact: true },
  lake: { commit: '67fd1e4', file: new URL('../fixtures/lake-v1.tar.gz', import.meta.url), compact: false },
} as const satisfies Record<string, Fixture>;

/** The version that wrote the warehouse fixture. */
export const FIXTURE_COMMIT = FIXTURES.warehouse.commit;
/** The warehouse fixture's archive. */
export const FIXTURE_FILE = FIXTURES.warehouse.file;
/** The sandbox the fixtures were exported from (its `--now` is the pinned one). */
export const FIXTURE_SANDBOX_FLAGS = ['--scale', '300', '--history-days', '3', '--chains', '56', '--no-pumped-prices'];
/** The chain exported. */
export const FIXTURE_CHAIN = 56;
/** Blocks the sandbox advanced between the fixture's two runs (more than the re-read window: the earlier version's incremental run missed null-updatedAt changes; a test starts its sandbox there again). */
export const FIXTURE_ADVANCE = 3000;
