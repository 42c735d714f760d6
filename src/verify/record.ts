/** Verifications in the ledger (`_pool_export.verifications`), for `status` and the dashboard. */
import { insertJsonRows } from '../store/json-rows.ts';
import type { Warehouse } from '../store/warehouse.ts';
import type { Check } from './check.ts';

/** The type of a check as the ledger stores it. */
const CHECK_ROW = {
  chain_id: 'INTEGER',
  dataset: 'VARCHAR',
  identity: 'VARCHAR',
  block: 'BIGINT',
  first_day: 'BIGINT',
  last_day: 'BIGINT',
  groups: 'INTEGER',
  gaps: 'INTEGER',
  mismatches: 'VARCHAR',
  skipped: 'VARCHAR',
  error: 'VARCHAR',
};

/** Mismatches kept per check in the ledger: the count is always whole. */
const KEPT = 100;

/** Records the checks of one verification, in one statement (the rows travel as one JSON parameter). */
export async function recordChecks(w: Pick<Warehouse, 'exec'>, runId: string, checks: readonly Check[]): Promise<void> {
  const rows = checks.map((c) => ({
    chain_id: c.chainId,
    dataset: c.dataset,
    identity: c.identity,
    block: c.block,
    first_day: c.days?.first ?? null,
    last_day: c.days?.last ?? null,
    groups: c.groups,
    gaps: c.mismatches.length,
    mismatches: c.mismatches.length
      ? JSON.stringify(
          c.mismatches.slice(0, KEPT).map(({ day, key, expected, found }) => ({ day, key, expected, found })),
        )
      : null,
    skipped: c.skipped ?? null,
    error: c.error ?? null,
  }));
  await insertJsonRows(
    w,
    { table: '_pool_export.verifications', runId, types: CHECK_ROW, exprs: { checked_at: 'now()' } },
    rows,
  );
}
