/**
 * Retention (`lake.keepSnapshotMonths`) on a real warehouse file and lake: four months of list snapshots, of a mutable
 * entity's history and of swaps, written by the lake writer; keeping two months deletes the older list rows from the
 * warehouse and the older months of the list and the history from the lake, and nothing of the swaps or of the
 * entity's state. The expected months and rows are written out by hand.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import { writeLake } from '../../src/lake/lake-writer.ts';
import { applyRetention, firstKeptMonth } from '../../src/lake/retention.ts';
import { Warehouse } from '../../src/store/warehouse.ts';

const LIST = findDataset('list.liquidity')!;
const PAIRS = findDataset('dodoex.pairs')!;
const SWAPS = findDataset('dodoex.swaps')!;
const MONTHS = ['2025-12', '2026-01', '2026-02', '2026-03'];
/** The middle of March 2026: keeping two months keeps February and March. */
const NOW = new Date('2026-03-15T12:00:00Z');

let dir: string;
let lake: string;
let w: Warehouse;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-retention-'));
  lake = join(dir, 'lake');
  w = await Warehouse.open(dir);
  await w.ensureTables([LIST, PAIRS, SWAPS]);
});
afterEach(async () => {
  await w.close();
  rmSync(dir, { recursive: true, force: true });
});

async function pending(ds: string, runs: string[]) {
  await w.exec(
    `INSERT INTO _pool_export.lake_pending (chain_id, dataset, from_seq, runs, rebuild) VALUES (56, $1, NULL, $2::VARCHAR[], false)`,
    [ds, `[${runs.join(',')}]`],
  );
}

/** One run per month, on the 10th: two list rows, the pair p1 read again, one swap; the lake written after each. */
async function fourMonths() {
  for (const m of MONTHS) {
    const run = `r${m}`;
    const at = `${m}-10 08:00:00+00`;
    for (const id of ['a', 'b'])
      await w.exec(
        `INSERT INTO list.liquidity (id, chain_id, _run_id, _taken_at) VALUES ($1, 56, $2, $3::TIMESTAMPTZ)`,
        [id, run, at],
      );
    await w.exec(`DELETE FROM dodoex.pairs WHERE id = 'p1'`);
    await w.exec(`INSERT INTO dodoex.pairs (id, chain_id, _run_id, _taken_at) VALUES ('p1', 56, $1, $2::TIMESTAMPTZ)`, [
      run,
      at,
    ]);
    await w.exec(`INSERT INTO dodoex.swaps (id, "timestamp", chain_id, _run_id) VALUES ($1, $2, 56, $3)`, [
      `s${m}`,
      String(Date.parse(`${m}-10T08:00:00Z`) / 1000),
      run,
    ]);
    for (const ds of ['list.liquidity', 'dodoex.pairs', 'dodoex.swaps']) await pending(ds, [run]);
    await writeLake(w, dir);
  }
}

const months = (path: string) =>
  existsSync(join(lake, path))
    ? readdirSync(join(lake, path))
        .filter((n) => n.startsWith('month='))
        .sort()
    : [];

describe('retention of snapshots and history', () => {
  it('keeps the N most recent calendar months, the current one included, across year ends', () => {
    expect(firstKeptMonth(NOW, 1)).toBe('2026-03');
    expect(firstKeptMonth(NOW, 2)).toBe('2026-02');
    expect(firstKeptMonth(NOW, 4)).toBe('2025-12');
    expect(firstKeptMonth(new Date('2026-01-01T00:00:00Z'), 2)).toBe('2025-12');
    expect(firstKeptMonth(new Date('2026-12-31T23:59:59Z'), 12)).toBe('2026-01');
    expect(firstKeptMonth(new Date('2026-12-31T23:59:59Z'), 13)).toBe('2025-12');
    expect(firstKeptMonth(new Date('2026-05-20T00:00:00Z'), 29)).toBe('2024-01');
  });

  it('deletes the older list rows from the warehouse, and the older months of the list and the history from the lake; never swaps or state', async () => {
    await fourMonths();
    expect(months('list/liquidity/chain=bsc')).toEqual(MONTHS.map((m) => `month=${m}`));
    expect(months('dodoex/pairs_history/chain=bsc')).toEqual(MONTHS.map((m) => `month=${m}`));

    const r = await applyRetention(w, lake, { keep: 2, now: NOW });
    expect(r).toEqual({ from: '2026-02', rows: 4, months: 4 });
    expect(
      (await w.all(`SELECT _run_id AS r, count(*) AS n FROM list.liquidity GROUP BY ALL ORDER BY r`)).map(
        (x) => `${x.r}:${x.n}`,
      ),
    ).toEqual(['r2026-02:2', 'r2026-03:2']);
    expect(months('list/liquidity/chain=bsc')).toEqual(['month=2026-02', 'month=2026-03']);
    expect(months('dodoex/pairs_history/chain=bsc')).toEqual(['month=2026-02', 'month=2026-03']);
    // The record stays: every month of swaps, the pair's state, and its last read in the warehouse.
    expect(months('dodoex/swaps/chain=bsc')).toEqual(MONTHS.map((m) => `month=${m}`));
    expect(existsSync(join(lake, 'dodoex/pairs/chain=bsc/data.parquet'))).toBe(true);
    expect(await w.all(`SELECT _run_id AS r FROM dodoex.pairs`)).toEqual([{ r: 'r2026-03' }]);
    expect(Number((await w.all(`SELECT count(*) AS n FROM dodoex.swaps`))[0]!.n)).toBe(4);

    // Again: nothing left to delete. A rewrite of every run of the list brings no old month back.
    expect(await applyRetention(w, lake, { keep: 2, now: NOW })).toEqual({ from: '2026-02', rows: 0, months: 0 });
    await pending(
      'list.liquidity',
      MONTHS.map((m) => `r${m}`),
    );
    await writeLake(w, dir);
    expect(months('list/liquidity/chain=bsc')).toEqual(['month=2026-02', 'month=2026-03']);
    const lakeRows = await w.all(
      `SELECT month, count(*) AS n FROM read_parquet('${lake}/list/liquidity/*/*/*.parquet', hive_partitioning = true) GROUP BY ALL ORDER BY month`,
    );
    expect(lakeRows.map((x) => `${x.month}:${x.n}`)).toEqual(['2026-02:2', '2026-03:2']);
  });

  it('deletes nothing while every month is within the kept ones', async () => {
    await fourMonths();
    expect(await applyRetention(w, lake, { keep: 4, now: NOW })).toEqual({ from: '2025-12', rows: 0, months: 0 });
    expect(months('list/liquidity/chain=bsc')).toHaveLength(4);
  });
});
