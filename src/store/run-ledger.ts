/** The run ledger: one row per run and one per task, so that `status` can tell what happened and when. */
import { insertJsonRows } from './json-rows.ts';
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
