/**
 * The lake writer on a real warehouse file: which files each pending entry writes, where, with which rows, which it
 * leaves alone, and what it clears. Expected paths and rows are written out by hand from the layout in
 * `lake/lake-writer.ts`'s header, and the files are read back with DuckDB's own Parquet reader.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import { writeLake } from '../../src/lake/lake-writer.ts';
import { Warehouse } from '../../src/store/warehouse.ts';

const DAY = 86_400;
/** 2026-01-01 00:00:00 UTC. */
const T0 = 1_767_225_600;
const day = (n: number) => new Date((T0 + n * DAY) * 1000).toISOString().slice(0, 10);

let dir: string;
let lake: string;
let w: Warehouse;

const SWAPS = findDataset('dodoex.swaps')!;
const PAIRS = findDataset('dodoex.pairs')!;
const ZOOS = findDataset('dodoex.dodo_zoos')!;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-lake-'));
  lake = join(dir, 'lake');
  w = await Warehouse.open(dir);
  await w.ensureTables([SWAPS, PAIRS, ZOOS]);
});
afterEach(async () => {
  await w.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every file under the lake, relative to it, sorted. */
function files(): string[] {
  if (!existsSync(lake)) return [];
  return (readdirSync(lake, { recursive: true }) as string[]).filter((f) => statSync(join(lake, f)).isFile()).sort();
}

async function pending(row: { chain: number; ds: string; from: number | null; runs: string[]; rebuild?: boolean }) {
  await w.exec(
    `INSERT INTO _pool_export.lake_pending (chain_id, dataset, from_seq, runs, rebuild) VALUES ($1, $2, $3, $4::VARCHAR[], $5)`,
    [row.chain, row.ds, row.from, `[${row.runs.join(',')}]`, row.rebuild ?? false],
  );
}

/** Swaps on chain 56 at the given seconds after T0, and one on chain 1 that must not reach chain 56's files. */
async function swaps(secs: number[], run = 'r1') {
  for (const [i, s] of secs.entries())
    await w.exec(`INSERT INTO dodoex.swaps (id, "timestamp", chain_id, _run_id) VALUES ($1, $2, 56, $3)`, [
      `s${s}-${i}`,
      String(T0 + s),
      run,
    ]);
  await w.exec(`INSERT INTO dodoex.swaps (id, "timestamp", chain_id, _run_id) VALUES ('eth', $1, 1, $2)`, [
    String(T0),
    run,
  ]);
}

/** The ids in one Parquet file, sorted. */
async function ids(file: string): Promise<string[]> {
  const rows = await w.all(`SELECT id FROM read_parquet($1) ORDER BY id`, [join(lake, file)]);
  return rows.map((r) => String(r.id));
}

describe('events', () => {
  it('writes one file per day with that day\u2019s rows, each day cut at its first and last second', async () => {
    // Days 0, 1, 9, 10, 11 and the last second of day 11.
    await swaps([0, DAY - 1, DAY, 9 * DAY + 5, 10 * DAY, 11 * DAY, 12 * DAY - 1]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    expect(await writeLake(w, dir)).toBe(5);
    const at = (d: number) => `dodoex/swaps/chain=bsc/day=${day(d)}/data.parquet`;
    expect(files()).toEqual([at(0), at(1), at(9), at(10), at(11)]);
    expect(await ids(at(0))).toEqual(['s0-0', 's86399-1']);
    expect(await ids(at(1))).toEqual(['s86400-2']);
    expect(await ids(at(11))).toEqual([`s${12 * DAY - 1}-6`, `s${11 * DAY}-5`]);
    expect(await w.all('SELECT * FROM _pool_export.lake_pending')).toEqual([]);
    expect(existsSync(join(lake, '.tmp')) ? readdirSync(join(lake, '.tmp')) : []).toEqual([]);
  });

  it('writes every row of more days than one COPY keeps files open for, each in its own day, nothing twice', async () => {
    // 120 days (DuckDB keeps at most 100 day files open), stored in an order that visits the days back and forth, as
    // the shards of a backfill store theirs: the writer closes and reopens day files, and a day may get several.
    const secs: number[] = [];
    for (let k = 0; k < 60; k++) secs.push(k * DAY + 7, (119 - k) * DAY + 11, (60 + k) * DAY + 13, (59 - k) * DAY + 17);
    await swaps(secs);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    const written = await writeLake(w, dir);
    const days = new Map<number, string[]>();
    for (const [i, s] of secs.entries())
      days.set(Math.floor(s / DAY), [...(days.get(Math.floor(s / DAY)) ?? []), `s${s}-${i}`]);
    expect(days.size).toBe(120);
    const all = files();
    expect(written).toBe(all.length);
    for (const [d, want] of days) {
      const folder = `dodoex/swaps/chain=bsc/day=${day(d)}`;
      const got = (await w.all(`SELECT id FROM read_parquet($1) ORDER BY id`, [join(lake, folder, '*.parquet')])).map(
        (r) => String(r.id),
      );
      expect(got, folder).toEqual([...want].sort());
    }
    expect(all.every((f) => /^dodoex\/swaps\/chain=bsc\/day=\d{4}-\d\d-\d\d\/data(-\d+)?\.parquet$/.test(f))).toBe(
      true,
    );
  });

  it('writes the last day when its first second is the newest row', async () => {
    await swaps([0, 10 * DAY]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    expect(await writeLake(w, dir)).toBe(2);
    expect(files()).toEqual([
      `dodoex/swaps/chain=bsc/day=${day(0)}/data.parquet`,
      `dodoex/swaps/chain=bsc/day=${day(10)}/data.parquet`,
    ]);
  });

  it('rewrites only the days from the start of the re-read window, and drops their stale extra files', async () => {
    await swaps([0, DAY, 2 * DAY]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    await writeLake(w, dir);
    const day0 = join(lake, `dodoex/swaps/chain=bsc/day=${day(0)}/data.parquet`);
    const before = statSync(day0).mtimeMs;
    // A file of an earlier write of day 1 that this one does not renew, and a stranger's file it must keep.
    const day1 = join(lake, `dodoex/swaps/chain=bsc/day=${day(1)}`);
    writeFileSync(join(day1, 'data-1.parquet'), 'stale');
    writeFileSync(join(day1, 'notes.txt'), 'mine');
    await w.exec(`INSERT INTO dodoex.swaps (id, "timestamp", chain_id, _run_id) VALUES ('late', $1, 56, 'r2')`, [
      String(T0 + DAY + 7),
    ]);
    // The window starts in the middle of day 1: the whole of day 1 is rewritten.
    await pending({ chain: 56, ds: 'dodoex.swaps', from: T0 + DAY + 3600, runs: ['r2'] });
    expect(await writeLake(w, dir)).toBe(2);
    expect(statSync(day0).mtimeMs).toBe(before);
    expect(readdirSync(day1).sort()).toEqual(['data.parquet', 'notes.txt']);
    expect(await ids(`dodoex/swaps/chain=bsc/day=${day(1)}/data.parquet`)).toEqual(['late', 's86400-1']);
  });

  it('writes nothing for a chain with no rows in the window, and still clears the entry', async () => {
    await swaps([0]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: T0 + 5 * DAY, runs: ['r1'] });
    expect(await writeLake(w, dir)).toBe(0);
    expect(files()).toEqual([]);
    expect(await w.all('SELECT * FROM _pool_export.lake_pending')).toEqual([]);
  });
});

describe('state and snapshots', () => {
  async function pairs(ids: string[], run: string, takenAt: string) {
    for (const id of ids)
      await w.exec(`INSERT INTO dodoex.pairs (id, chain_id, _run_id, _taken_at) VALUES ($1, 56, $2, $3::TIMESTAMPTZ)`, [
        id,
        run,
        takenAt,
      ]);
  }

  it('writes a mutable dataset\u2019s current state whole, and a history part per run on the day it was read', async () => {
    await pairs(['p1', 'p2'], 'r1', `${day(0)} 10:00:00+00`);
    await pairs(['p3'], 'r2', `${day(1)} 23:59:59+00`);
    await pending({ chain: 56, ds: 'dodoex.pairs', from: null, runs: ['r1', 'r2'] });
    expect(await writeLake(w, dir)).toBe(3);
    expect(files()).toEqual([
      'dodoex/pairs/current/chain=bsc/data.parquet',
      `dodoex/pairs/history/chain=bsc/day=${day(0)}/part-r1.parquet`,
      `dodoex/pairs/history/chain=bsc/day=${day(1)}/part-r2.parquet`,
    ]);
    expect(await ids('dodoex/pairs/current/chain=bsc/data.parquet')).toEqual(['p1', 'p2', 'p3']);
    expect(await ids(`dodoex/pairs/history/chain=bsc/day=${day(0)}/part-r1.parquet`)).toEqual(['p1', 'p2']);
  });

  it('appends a snapshot part per run under data/, beside the earlier runs\u2019 parts', async () => {
    await w.exec(
      `INSERT INTO dodoex.dodo_zoos (id, chain_id, _run_id, _taken_at) VALUES ('z', 56, 'r1', $1::TIMESTAMPTZ)`,
      [`${day(0)} 00:00:00+00`],
    );
    await pending({ chain: 56, ds: 'dodoex.dodo_zoos', from: null, runs: ['r1'] });
    await writeLake(w, dir);
    await w.exec(
      `INSERT INTO dodoex.dodo_zoos (id, chain_id, _run_id, _taken_at) VALUES ('z', 56, 'r2', $1::TIMESTAMPTZ)`,
      [`${day(0)} 12:00:00+00`],
    );
    await pending({ chain: 56, ds: 'dodoex.dodo_zoos', from: null, runs: ['r2'] });
    expect(await writeLake(w, dir)).toBe(1);
    expect(files()).toEqual([
      `dodoex/dodo_zoos/chain=bsc/day=${day(0)}/part-r1.parquet`,
      `dodoex/dodo_zoos/chain=bsc/day=${day(0)}/part-r2.parquet`,
    ]);
  });

  it('a rebuild replaces each folder of the dataset and chain whole, leaving nothing aside', async () => {
    await pairs(['p1'], 'r1', `${day(0)} 10:00:00+00`);
    const history = join(lake, 'dodoex/pairs/history/chain=bsc');
    mkdirSync(join(history, 'day=2020-01-01'), { recursive: true });
    writeFileSync(join(history, 'day=2020-01-01/part-gone.parquet'), 'old type');
    mkdirSync(join(lake, 'dodoex/pairs/history/chain=ethereum'), { recursive: true });
    await pending({ chain: 56, ds: 'dodoex.pairs', from: null, runs: ['r1'], rebuild: true });
    expect(await writeLake(w, dir)).toBe(2);
    expect(files()).toEqual([
      'dodoex/pairs/current/chain=bsc/data.parquet',
      `dodoex/pairs/history/chain=bsc/day=${day(0)}/part-r1.parquet`,
    ]);
    // Other chains' folders stay; nothing is left in staging or aside.
    expect(readdirSync(join(lake, 'dodoex/pairs/history')).sort()).toEqual(['chain=bsc', 'chain=ethereum']);
    expect(readdirSync(join(lake, '.tmp'))).toEqual([]);
    expect(await w.all('SELECT * FROM _pool_export.lake_pending')).toEqual([]);
  });

  it('clears an entry of a dataset it does not know, writing nothing', async () => {
    await pending({ chain: 56, ds: 'dodoex.gone', from: null, runs: ['r1'] });
    expect(await writeLake(w, dir)).toBe(0);
    expect(files()).toEqual([]);
    expect(await w.all('SELECT * FROM _pool_export.lake_pending')).toEqual([]);
  });
});
