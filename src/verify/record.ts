/** Verifications in the ledger (`_pool_export.verifications`), for `status` and the dashboard. */
import type { Warehouse } from '../store/warehouse.ts';
import type { Check } from './verify.ts';

/** Mismatches kept per check in the ledger: the count is always whole. */
const KEPT = 100;

/** Records the checks of one verification, in one statement (the rows travel as one JSON parameter). */
export async function recordChecks(w: Pick<Warehouse, 'exec'>, runId: string, checks: readonly Check[]): Promise<void> {
  if (!checks.length) return;
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
  await w.exec(
    `INSERT INTO _pool_export.verifications (run_id, chain_id, dataset, identity, checked_at, block, first_day, last_day, groups, gaps, mismatches, skipped, error)
     SELECT $1, r.chain_id, r.dataset, r.identity, now(), r.block, r.first_day, r.last_day, r.groups, r.gaps, r.mismatches, r.skipped, r.error
     FROM (SELECT unnest(from_json($2, '[{"chain_id":"INTEGER","dataset":"VARCHAR","identity":"VARCHAR","block":"BIGINT","first_day":"BIGINT","last_day":"BIGINT","groups":"INTEGER","gaps":"INTEGER","mismatches":"VARCHAR","skipped":"VARCHAR","error":"VARCHAR"}]'), recursive := true)) r`,
    [runId, JSON.stringify(rows)],
  );
}
