/**
 * The run ledger on a real warehouse file: every task's record read back as it was handed over, whatever its texts
 * hold, in one statement however many tasks there are.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LedgerTask, RunLedger } from '../../src/store/run-ledger.ts';
import { Warehouse } from '../../src/store/warehouse.ts';

let dir: string;
let w: Warehouse;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-ledger-'));
  w = await Warehouse.open(dir);
});
afterEach(async () => {
  await w.close();
  rmSync(dir, { recursive: true, force: true });
});

const task = (i: number, over: Partial<LedgerTask> = {}): LedgerTask => ({
  chainId: 56,
  dataset: `dodoex.t${i}`,
  status: 'ok',
  startedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
  endedAt: new Date(Date.UTC(2026, 0, 1, 0, 1, i)),
  pages: i,
  rows: 1_000_000_000_000 + i,
  requests: i + 1,
  retries: 0,
  duplicates: 0,
  block: 31_000_000 + i,
  cursorBefore: null,
  cursorAfter: JSON.stringify({ seq: String(i), id: `0x${i}` }),
  ...over,
});

describe('the run ledger', () => {
  it('stores each task as given: numbers, times, nulls, routes and failovers as JSON, hostile error text byte for byte', async () => {
    const ledger = new RunLedger(w);
    await ledger.start('r1', ['events']);
    const hostile = 'a "quoted" \\ back\u0000nul \u001b[2J\u202e rtl \u{1F600} \'\'; DROP TABLE x; -- {"json":1}';
    const tasks = [
      task(1),
      task(2, {
        status: 'failed',
        cursorBefore: '{"seq":"1"}',
        cursorAfter: null,
        block: null,
        error: { cls: 'http', message: hostile },
        route: 'gateway',
        routes: [{ label: 'gateway', head: 5, lagBlocks: 0, state: 'chosen', note: null }],
        failovers: [{ from: 'a', to: 'b', block: 7, reason: 'r' }],
        duplicates: 3,
      }),
      task(3, { status: 'unavailable', error: { cls: 'unavailable', message: 'lone \ud800 half' } }),
    ];
    await ledger.tasks('r1', tasks);
    const rows = await w.all(
      `SELECT run_id, chain_id, dataset, epoch_ms(started_at) AS s, epoch_ms(ended_at) AS e, status, pages, rows::VARCHAR AS rows,
              requests, retries, block, cursor_before, cursor_after, error_class, error, duplicate_ids, route, routes, failovers
       FROM _pool_export.run_tasks ORDER BY dataset`,
    );
    expect(rows).toHaveLength(3);
    tasks.forEach((t, i) => {
      const r = rows[i]!;
      expect(r).toMatchObject({
        run_id: 'r1',
        chain_id: 56,
        dataset: t.dataset,
        // BIGINTs come back as text.
        s: String(t.startedAt.getTime()),
        e: String(t.endedAt.getTime()),
        status: t.status,
        pages: t.pages,
        rows: String(t.rows),
        requests: t.requests,
        retries: 0,
        block: t.block === null ? null : String(t.block),
        cursor_before: t.cursorBefore,
        cursor_after: t.cursorAfter,
        error_class: t.error?.cls ?? null,
        duplicate_ids: t.duplicates,
        route: t.route ?? null,
      });
      expect(r.routes === null ? null : JSON.parse(String(r.routes))).toEqual(t.routes ?? null);
      expect(r.failovers === null ? null : JSON.parse(String(r.failovers))).toEqual(t.failovers ?? null);
    });
    expect(rows[0]!.error).toBeNull();
    expect(rows[1]!.error).toBe(hostile);
    // A lone surrogate half cannot be UTF-8: it is stored as U+FFFD, as DuckDB stores any bound string holding one.
    expect(rows[2]!.error).toBe('lone \ufffd half');
  });

  it('records a run of 400 tasks, every one of them', async () => {
    const ledger = new RunLedger(w);
    await ledger.start('r2', ['all']);
    await ledger.tasks(
      'r2',
      Array.from({ length: 400 }, (_, i) => task(i)),
    );
    const [n] = await w.all(
      'SELECT count(*)::INTEGER AS n, count(DISTINCT dataset)::INTEGER AS d, sum(pages)::INTEGER AS p FROM _pool_export.run_tasks',
    );
    expect(n).toEqual({ n: 400, d: 400, p: (399 * 400) / 2 });
  });
});
