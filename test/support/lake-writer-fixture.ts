/**
 * A real warehouse file and lake folder for each test of the lake writer (test/unit/lake-writer*.test.ts): three
 * datasets' tables made afresh before each test and removed after it, and the helpers that add pending entries and
 * swaps and read the lake's files back. `dir`, `lake` and `w` are live bindings: each test sees its own.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import { Warehouse } from '../../src/store/warehouse.ts';

export const DAY = 86_400;
/** 2026-01-01 00:00:00 UTC. */
export const T0 = 1_767_225_600;
/** 2026-02-01 00:00:00 UTC. */
export const FEB = T0 + 31 * DAY;

export let dir: string;
export let lake: string;
export let w: Warehouse;

export const SWAPS = findDataset('dodoex.swaps')!;
export const PAIRS = findDataset('dodoex.pairs')!;
export const ZOOS = findDataset('dodoex.dodo_zoos')!;

/** Every Parquet file under the lake, relative to it, sorted. */
export function files(): string[] {
  if (!existsSync(lake)) return [];
  return (readdirSync(lake, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.parquet') && statSync(join(lake, f)).isFile())
    .sort();
}

/** The inode and modification time of a lake file: equal before and after means the write did not touch it. */
export const mark = (f: string) => {
  const s = statSync(join(lake, f));
  return `${s.ino}:${s.mtimeMs}`;
};

export async function pending(row: {
  chain: number;
  ds: string;
  from: number | null;
  runs: string[];
  rebuild?: boolean;
  dropped?: boolean;
}) {
  await w.exec(
    `INSERT INTO _pool_export.lake_pending (chain_id, dataset, from_seq, runs, rebuild, dropped) VALUES ($1, $2, $3, $4::VARCHAR[], $5, $6)`,
    [row.chain, row.ds, row.from, `[${row.runs.join(',')}]`, row.rebuild ?? false, row.dropped ?? true],
  );
}

/** A swap on chain 56 at `secs` after T0 (id `s<secs>` unless given), and its exact amount. */
export async function swap(secs: number, run = 'r1', id = `s${secs}`) {
  await w.exec(
    `INSERT INTO dodoex.swaps (id, "timestamp", amount_in, amount_in_text, chain_id, _run_id) VALUES ($1, $2, 1.5, '1.50', 56, $3)`,
    [id, String(T0 + secs), run],
  );
}

/** Swaps at these seconds after T0, and one on chain 1 that must not reach chain 56's files. */
export async function swaps(secs: number[], run = 'r1') {
  for (const s of secs) await swap(s, run);
  await w.exec(`INSERT INTO dodoex.swaps (id, "timestamp", chain_id, _run_id) VALUES ('eth', $1, 1, $2)`, [
    String(T0),
    run,
  ]);
}

/** The ids of one lake file, in the file's order. */
export async function ids(file: string): Promise<string[]> {
  const rows = await w.all(`SELECT id FROM read_parquet($1, hive_partitioning = false)`, [join(lake, file)]);
  return rows.map((r) => String(r.id));
}

export const jan = (n: number) => `dodoex/swaps/chain=bsc/month=2026-01/part-${String(n).padStart(5, '0')}.parquet`;
export const feb = (n: number) => `dodoex/swaps/chain=bsc/month=2026-02/part-${String(n).padStart(5, '0')}.parquet`;

/** A warehouse with the tables of swaps, pairs and zoos, and its lake folder, before each test of the calling file; removed after. */
export function useLakeWriterFixture(): void {
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
}
