/**
 * The run ledger: one row per run and one per task, so that `status` can tell what happened and when. It keeps the
 * last `keepRuns` runs (`pruneLedger`): a follower that runs every 10 s adds 8,640 runs and, on the demo's 8 chains, 2.8
 * million task rows a day, which every status read scans, every checkpoint rewrites the end of and every bucket
 * publish uploads whole.
 */
import { insertJsonRows } from './json-rows.ts';
import type { Warehouse } from './warehouse.ts';

/** One task of a run as the ledger records it. */
export interface LedgerTask {
  readonly chainId: number;
  readonly dataset: string;
  /** `stopped`: the run was asked to stop (not a failure: the next run resumes it). */
  readonly status: 'ok' | 'failed' | 'unavailable' | 'stopped';
  readonly startedAt: Date;
  readonly endedAt: Date;
  readonly pages: number;
  readonly rows: number;
  readonly requests: number;
  readonly retries: number;
  readonly duplicates: number;
  readonly block: number | null;
  readonly cursorBefore: string | null;
  readonly cursorAfter: string | null;
  readonly error?: { readonly cls: string; readonly message: string };
  /** The label of the route that served the task. */
  readonly route?: string;
  /** Where each route stood at the task's start, when there were several. */
  readonly routes?: readonly unknown[];
  /** Moves to another route during the task, and refused ones. */
  readonly failovers?: readonly unknown[];
  /** The head of the task's route when it read, `<number>:<hash>` (see `TaskResult.head`). */
  readonly head?: string;
}

/** The type of the list `tasks` hands DuckDB as JSON: one struct per task, as run_tasks stores it. */
const LEDGER_ROW = {
  chain_id: 'INTEGER',
  dataset: 'VARCHAR',
  started_at: 'VARCHAR',
  ended_at: 'VARCHAR',
  status: 'VARCHAR',
  pages: 'INTEGER',
  rows: 'BIGINT',
  requests: 'INTEGER',
  retries: 'INTEGER',
  block: 'BIGINT',
  cursor_before: 'VARCHAR',
  cursor_after: 'VARCHAR',
  error_class: 'VARCHAR',
  error: 'VARCHAR',
  duplicate_ids: 'INTEGER',
  route: 'VARCHAR',
  routes: 'VARCHAR',
  failovers: 'VARCHAR',
  head: 'VARCHAR',
};

/** Writes the ledger. */
export class RunLedger {
  constructor(private readonly w: Warehouse) {}

  /** Records the start of a run. */
  async start(runId: string, jobs: readonly string[]): Promise<void> {
    await this.w.exec(
      "INSERT INTO _pool_export.runs (run_id, jobs, started_at, status) VALUES ($1, $2, now(), 'running')",
      [runId, jobs.join(',')],
    );
  }

  /** Records the finished tasks of a run, in one statement. */
  async tasks(runId: string, results: readonly LedgerTask[]): Promise<void> {
    if (!results.length) return;
    const rows = results.map((r) => ({
      chain_id: r.chainId,
      dataset: r.dataset,
      started_at: r.startedAt.toISOString(),
      ended_at: r.endedAt.toISOString(),
      status: r.status,
      pages: r.pages,
      rows: r.rows,
      requests: r.requests,
      retries: r.retries,
      block: r.block,
      cursor_before: r.cursorBefore,
      cursor_after: r.cursorAfter,
      error_class: r.error?.cls ?? null,
      error: r.error?.message ?? null,
      duplicate_ids: r.duplicates,
      route: r.route ?? null,
      routes: r.routes ? JSON.stringify(r.routes) : null,
      failovers: r.failovers ? JSON.stringify(r.failovers) : null,
      head: r.head ?? null,
    }));
    await insertJsonRows(
      this.w,
      {
        table: '_pool_export.run_tasks',
        runId,
        types: LEDGER_ROW,
        exprs: { started_at: 'r.started_at::TIMESTAMPTZ', ended_at: 'r.ended_at::TIMESTAMPTZ' },
      },
      rows,
    );
  }

  /** Closes a run. */
  async finish(runId: string, results: readonly LedgerTask[], stopped: boolean): Promise<void> {
    const sum = (k: 'rows' | 'requests' | 'retries') => results.reduce((a, r) => a + r[k], 0);
    const failed = results.filter((r) => r.status === 'failed').length;
    await this.w.exec(
      'UPDATE _pool_export.runs SET ended_at = now(), status = $2, tasks = $3, failed = $4, rows = $5, requests = $6, retries = $7, error = $8 WHERE run_id = $1',
      [
        runId,
        stopped ? 'stopped' : failed ? 'failed' : 'ok',
        results.length,
        failed,
        sum('rows'),
        sum('requests'),
        sum('retries'),
        stopped ? 'stopped on request; the next run resumes from the last committed batch' : null,
      ],
    );
  }
}

/**
 * What `pruneLedger` keeps beyond the last runs: the rows the exporter still reads. A checkpoint's run tells its head
 * and the status of the task that moved it (`checkpoint-store.ts`, `verify/scope.ts`); a dataset's last task and last
 * successful task are its `status` (`status-file.ts`), and so is its last verification: each found by an aggregate
 * of one row per dataset and chain.
 */
const KEPT_TASKS = `
  kept AS (
    SELECT t.run_id, t.chain_id, t.dataset FROM _pool_export.run_tasks t
    JOIN (SELECT chain_id, dataset, max(ended_at) AS last, max(ended_at) FILTER (WHERE status = 'ok') AS last_ok
          FROM _pool_export.run_tasks GROUP BY chain_id, dataset) l
      ON l.chain_id = t.chain_id AND l.dataset = t.dataset AND (t.ended_at = l.last OR t.ended_at = l.last_ok)
    UNION SELECT run_id, chain_id, dataset FROM _pool_export.checkpoints WHERE run_id IS NOT NULL
    UNION SELECT run_id, chain_id, dataset FROM _pool_export.shard_checkpoints WHERE run_id IS NOT NULL
  )`;
const LAST_VERIFIED = `
  last_verified AS (
    SELECT v.run_id, v.chain_id, v.dataset FROM _pool_export.verifications v
    JOIN (SELECT chain_id, dataset, max(checked_at) AS at FROM _pool_export.verifications WHERE skipped IS NULL
          GROUP BY chain_id, dataset) l
      ON l.chain_id = v.chain_id AND l.dataset = v.dataset AND l.at = v.checked_at
    WHERE v.skipped IS NULL
  )`;

/**
 * Deletes what the ledger holds of runs before the last `keep` (by start): their runs, their tasks and the
 * verifications checked before the oldest of those runs began, but for the rows the exporter still reads
 * (`KEPT_TASKS`, `LAST_VERIFIED`). It does so once a tenth of `keep` runs came since it last did
 * (`meta.ledger_pruned_at`), so that a run seldom pays for it, whatever the rows it keeps. Returns the task rows
 * deleted.
 */
export async function pruneLedger(w: Warehouse, keep: number): Promise<number> {
  const [n] = await w.all(
    `SELECT count(*) AS runs, count(*) FILTER (WHERE started_at > coalesce(
       (SELECT TRY_CAST(value AS TIMESTAMPTZ) FROM _pool_export.meta WHERE key = 'ledger_pruned_at'),
       '-infinity'::TIMESTAMPTZ)) AS since
     FROM _pool_export.runs`,
  );
  if (Number(n!.runs) <= keep || Number(n!.since) <= Math.ceil(keep / 10)) return 0;
  return w.transaction(async (tx) => {
    const [cut] = await tx.all(
      'SELECT min(started_at)::VARCHAR AS since FROM (SELECT started_at FROM _pool_export.runs ORDER BY started_at DESC LIMIT $1)',
      [keep],
    );
    const since = String(cut!.since);
    const tasks = await tx.exec(
      `WITH ${KEPT_TASKS}
       DELETE FROM _pool_export.run_tasks t
       WHERE t.run_id IN (SELECT run_id FROM _pool_export.runs WHERE started_at < $1::TIMESTAMPTZ)
         AND NOT EXISTS (SELECT 1 FROM kept k WHERE k.run_id = t.run_id AND k.chain_id = t.chain_id AND k.dataset = t.dataset)`,
      [since],
    );
    await tx.exec(
      `WITH ${LAST_VERIFIED}
       DELETE FROM _pool_export.verifications v
       WHERE v.checked_at < $1::TIMESTAMPTZ
         AND NOT EXISTS (SELECT 1 FROM last_verified k WHERE k.run_id = v.run_id AND k.chain_id = v.chain_id AND k.dataset = v.dataset)`,
      [since],
    );
    await tx.exec(
      `DELETE FROM _pool_export.runs r
       WHERE r.started_at < $1::TIMESTAMPTZ
         AND NOT EXISTS (SELECT 1 FROM _pool_export.run_tasks t WHERE t.run_id = r.run_id)
         AND NOT EXISTS (SELECT 1 FROM _pool_export.verifications v WHERE v.run_id = r.run_id)
         AND NOT EXISTS (SELECT 1 FROM _pool_export.checkpoints c WHERE c.run_id = r.run_id)
         AND NOT EXISTS (SELECT 1 FROM _pool_export.shard_checkpoints s WHERE s.run_id = r.run_id)`,
      [since],
    );
    // The mark is the start of the last run it saw: the runs after it are counted, whatever the clock says.
    await tx.exec(
      "INSERT OR REPLACE INTO _pool_export.meta (key, value) SELECT 'ledger_pruned_at', max(started_at)::VARCHAR FROM _pool_export.runs",
    );
    return tasks;
  });
}
