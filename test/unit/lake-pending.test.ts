/**
 * What the lake write reads of `_pool_export.lake_pending` (`src/lake/pending.ts`), on a real warehouse file: each
 * entry as stored, and the months of its runs' rows, read for every table and chain at once. The expected months are
 * written out by hand from the rows' times.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATASETS, findDataset } from '../../src/catalog/catalog.ts';
import { readPending } from '../../src/lake/pending.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { spyAll } from '../support/statement-spy.ts';

const SWAPS = findDataset('dodoex.swaps')!;
const PAIRS = findDataset('dodoex.pairs')!;
const ZOOS = findDataset('dodoex.dodo_zoos')!;
const byName = new Map(DATASETS.map((d) => [d.name, d]));

let dir: string;
let w: Warehouse;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-pending-'));
  w = await Warehouse.open(dir);
  await w.ensureTables([SWAPS, PAIRS, ZOOS]);
});
afterEach(async () => {
  await w.close();
  rmSync(dir, { recursive: true, force: true });
});

async function pending(chain: number, ds: string, runs: string[], opts: { from?: number; rebuild?: boolean } = {}) {
  await w.exec(
    `INSERT INTO _pool_export.lake_pending (chain_id, dataset, from_seq, runs, rebuild) VALUES ($1, $2, $3, $4::VARCHAR[], $5)`,
    [chain, ds, opts.from ?? null, `[${runs.join(',')}]`, opts.rebuild ?? false],
  );
}

const row = (table: string, id: string, chain: number, run: string, at: string) =>
  w.exec(`INSERT INTO ${table} (id, chain_id, _run_id, _taken_at) VALUES ($1, $2, $3, $4::TIMESTAMPTZ)`, [
    id,
    chain,
    run,
    at,
  ]);

describe('the pending entries of a lake write', () => {
  it('carry the months of their runs’ rows, chain by chain, for snapshots and mutable history; for events, where their write starts and the months from there; none for rebuilds and unknown datasets', async () => {
    // Zoos: r1 on bsc in January, on polygon in January and February; r0 (an earlier run) on bsc in December.
    await row('dodoex.dodo_zoos', 'a', 56, 'r1', '2026-01-31 23:59:00+00');
    await row('dodoex.dodo_zoos', 'b', 137, 'r1', '2026-01-31 23:59:30+00');
    await row('dodoex.dodo_zoos', 'c', 137, 'r1', '2026-02-01 00:00:30+00');
    await row('dodoex.dodo_zoos', 'd', 56, 'r0', '2025-12-31 12:00:00+00');
    // Pairs (mutable: their history's month is when they were taken): r1 on bsc in March.
    await row('dodoex.pairs', 'p', 56, 'r1', '2026-03-05 00:00:00+00');
    await pending(56, 'dodoex.dodo_zoos', ['r1']);
    await pending(137, 'dodoex.dodo_zoos', ['r1']);
    // Another set of runs on chain 1: its own part of the statement, its own months (r0 has no row there, r2 none
    // anywhere).
    await pending(1, 'dodoex.dodo_zoos', ['r0', 'r2']);
    await pending(56, 'dodoex.pairs', ['r1']);
    await pending(10, 'dodoex.pairs', []);
    // Swaps (events): on bsc from 2026-01-01 on, whatever run read them; on polygon from the first of r1's rows; on
    // optimism, r9 left no row.
    const swap = (id: string, chain: number, run: string, timestamp: number) =>
      w.exec(`INSERT INTO dodoex.swaps (id, chain_id, _run_id, "timestamp") VALUES ($1, $2, $3, $4)`, [
        id,
        chain,
        run,
        timestamp,
      ]);
    await swap('s0', 56, 'r0', 1_767_139_200); // 2025-12-31: before the entry's start
    await swap('s1', 56, 'r0', 1_768_435_200); // 2026-01-15
    await swap('s2', 56, 'r1', 1_770_076_800); // 2026-02-03
    await swap('s3', 137, 'r0', 1_771_545_600); // 2026-02-20: before r1's first
    await swap('s4', 137, 'r1', 1_775_088_000); // 2026-04-02
    await swap('s5', 137, 'r1', 1_772_668_800); // 2026-03-05: r1's first
    await pending(56, 'dodoex.swaps', ['r1'], { from: 1_767_225_600 });
    await pending(137, 'dodoex.swaps', ['r1']);
    await pending(10, 'dodoex.swaps', ['r9']);
    await pending(1, 'dodoex.swaps', ['r1'], { rebuild: true });
    await pending(137, 'dodoex.pairs', ['r1'], { rebuild: true });
    await pending(56, 'dodoex.gone', ['r1']);
    // The statements it runs: the entries, the months of every snapshot and history in one, and the start and months of
    // every event entry in one.
    const asked = spyAll(w);
    const got = (await readPending(w, byName)).map((e) => ({
      entry: `${e.name}/${e.chainId}`,
      ds: e.ds?.name,
      fromSeq: e.fromSeq,
      runs: e.runs,
      rebuild: e.rebuild,
      months: e.months && [...e.months].sort(),
      ...(e.seqFrom !== undefined ? { seqFrom: e.seqFrom } : {}),
    }));
    expect(got).toEqual([
      {
        entry: 'dodoex.dodo_zoos/1',
        ds: 'dodoex.dodo_zoos',
        fromSeq: null,
        runs: ['r0', 'r2'],
        rebuild: false,
        months: [],
      },
      {
        entry: 'dodoex.dodo_zoos/56',
        ds: 'dodoex.dodo_zoos',
        fromSeq: null,
        runs: ['r1'],
        rebuild: false,
        months: ['2026-01'],
      },
      {
        entry: 'dodoex.dodo_zoos/137',
        ds: 'dodoex.dodo_zoos',
        fromSeq: null,
        runs: ['r1'],
        rebuild: false,
        months: ['2026-01', '2026-02'],
      },
      { entry: 'dodoex.gone/56', ds: undefined, fromSeq: null, runs: ['r1'], rebuild: false, months: undefined },
      { entry: 'dodoex.pairs/10', ds: 'dodoex.pairs', fromSeq: null, runs: [], rebuild: false, months: [] },
      {
        entry: 'dodoex.pairs/56',
        ds: 'dodoex.pairs',
        fromSeq: null,
        runs: ['r1'],
        rebuild: false,
        months: ['2026-03'],
      },
      { entry: 'dodoex.pairs/137', ds: 'dodoex.pairs', fromSeq: null, runs: ['r1'], rebuild: true, months: undefined },
      { entry: 'dodoex.swaps/1', ds: 'dodoex.swaps', fromSeq: null, runs: ['r1'], rebuild: true, months: undefined },
      {
        entry: 'dodoex.swaps/10',
        ds: 'dodoex.swaps',
        fromSeq: null,
        runs: ['r9'],
        rebuild: false,
        months: [],
        seqFrom: null,
      },
      {
        entry: 'dodoex.swaps/56',
        ds: 'dodoex.swaps',
        fromSeq: 1_767_225_600,
        runs: ['r1'],
        rebuild: false,
        months: ['2026-01', '2026-02'],
        seqFrom: 1_767_225_600,
      },
      {
        entry: 'dodoex.swaps/137',
        ds: 'dodoex.swaps',
        fromSeq: null,
        runs: ['r1'],
        rebuild: false,
        months: ['2026-03', '2026-04'],
        seqFrom: 1_772_668_800,
      },
    ]);
    expect(asked.length).toBe(3);
  });
});
