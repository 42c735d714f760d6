/** The run ledger: one row per run and one per task, so that `status` can tell what happened and when. */
import type { Warehouse } from './warehouse.ts';

/** One task of a run as the ledger records it. */
export interface LedgerTask {
  readonly chainId: number;
  readonly dataset: string;
  readonly status: 'ok' | 'failed' | 'unavailable';
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
}

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

  /** Records the finished tasks of a run, in one transaction. */
  async tasks(runId: string, results: readonly LedgerTask[]): Promise<void> {
    await this.w.transaction(async (tx) => {
      for (const r of results) await this.task(tx.exec, runId, r);
    });
  }

  private async task(exec: Warehouse['exec'], runId: string, r: LedgerTask): Promise<void> {
    await exec(
      `INSERT INTO _pool_export.run_tasks (run_id, chain_id, dataset, started_at, ended_at, status, pages, rows, requests, retries, block, cursor_before, cursor_after, error_class, error, duplicate_ids, route, routes, failovers)
       VALUES ($1, $2, $3, $4::TIMESTAMPTZ, $5::TIMESTAMPTZ, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
      [
        runId,
        r.chainId,
        r.dataset,
        r.startedAt.toISOString(),
        r.endedAt.toISOString(),
        r.status,
        r.pages,
        r.rows,
        r.requests,
        r.retries,
        r.block,
        r.cursorBefore,
        r.cursorAfter,
        r.error?.cls ?? null,
        r.error?.message ?? null,
        r.duplicates,
        r.route ?? null,
        r.routes ? JSON.stringify(r.routes) : null,
        r.failovers ? JSON.stringify(r.failovers) : null,
      ],
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
