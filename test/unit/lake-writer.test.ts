/**
 * The lake writer on a real warehouse file: which files each pending entry writes, where, with which rows in which
 * order, which files it leaves alone (same inode, same bytes), and what it clears. Expected paths and rows are written
 * out by hand from the layout in `lake/layout.ts`'s header, and the files are read back with DuckDB's own Parquet
 * reader; a second DuckDB instance reads the lake while the writer publishes.
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import { dataFolder } from '../../src/config/data-folder.ts';
import { DEFAULT_TRACKED } from '../../src/config/tracked.ts';
import { CHAIN_ROWS } from '../../src/lake/chain-writes.ts';
import { compactLake } from '../../src/lake/compact.ts';
import { defineDatasetViews } from '../../src/lake/lake-db.ts';
import { publish, recoverPublish } from '../../src/lake/lake-files.ts';
import { writeLake } from '../../src/lake/lake-writer.ts';
import { TORN_READ } from '../../src/reports/torn-read.ts';
import { openLakeDb, writeViewsFile } from '../../src/reports/views.ts';
import { Warehouse } from '../../src/store/warehouse.ts';

const DAY = 86_400;
/** 2026-01-01 00:00:00 UTC. */
const T0 = 1_767_225_600;
/** 2026-02-01 00:00:00 UTC. */
const FEB = T0 + 31 * DAY;

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

/** Every Parquet file under the lake, relative to it, sorted. */
function files(): string[] {
  if (!existsSync(lake)) return [];
  return (readdirSync(lake, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.parquet') && statSync(join(lake, f)).isFile())
    .sort();
}

/** The inode and modification time of a lake file: equal before and after means the write did not touch it. */
const mark = (f: string) => {
  const s = statSync(join(lake, f));
  return `${s.ino}:${s.mtimeMs}`;
};

async function pending(row: {
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
async function swap(secs: number, run = 'r1', id = `s${secs}`) {
  await w.exec(
    `INSERT INTO dodoex.swaps (id, "timestamp", amount_in, amount_in_text, chain_id, _run_id) VALUES ($1, $2, 1.5, '1.50', 56, $3)`,
    [id, String(T0 + secs), run],
  );
}

/** Swaps at these seconds after T0, and one on chain 1 that must not reach chain 56's files. */
async function swaps(secs: number[], run = 'r1') {
  for (const s of secs) await swap(s, run);
  await w.exec(`INSERT INTO dodoex.swaps (id, "timestamp", chain_id, _run_id) VALUES ('eth', $1, 1, $2)`, [
    String(T0),
    run,
  ]);
}

/** The ids of one lake file, in the file's order. */
async function ids(file: string): Promise<string[]> {
  const rows = await w.all(`SELECT id FROM read_parquet($1, hive_partitioning = false)`, [join(lake, file)]);
  return rows.map((r) => String(r.id));
}

const jan = (n: number) => `dodoex/swaps/chain=bsc/month=2026-01/part-${String(n).padStart(5, '0')}.parquet`;
const feb = (n: number) => `dodoex/swaps/chain=bsc/month=2026-02/part-${String(n).padStart(5, '0')}.parquet`;

describe('events', () => {
  it('writes each month of a chain in time order, cut at its first and last second, and names the layout', async () => {
    await swaps([31 * DAY - 1, 0, FEB - T0, 5, 31 * DAY + 7]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    expect(await writeLake(w, dir)).toBe(2);
    expect(files()).toEqual([jan(1), feb(1)]);
    expect(await ids(jan(1))).toEqual(['s0', 's5', `s${31 * DAY - 1}`]);
    expect(await ids(feb(1))).toEqual([`s${31 * DAY}`, `s${31 * DAY + 7}`]);
    expect(JSON.parse(readFileSync(join(lake, '_layout.json'), 'utf8'))).toEqual({ layout: 2 });
    expect(await w.all('SELECT * FROM _pool_export.lake_pending')).toEqual([]);
    expect(existsSync(join(lake, '.tmp'))).toBe(false);
  });

  it('gives analysts a time column beside the integer seconds, and the exact texts in one struct at the end', async () => {
    await swaps([5]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    await writeLake(w, dir);
    const cols = (
      await w.all(`DESCRIBE SELECT * FROM read_parquet($1, hive_partitioning = false)`, [join(lake, jan(1))])
    ).map((r) => `${r.column_name} ${r.column_type}`);
    const at = cols.indexOf('timestamp BIGINT');
    expect(cols[at + 1]).toBe('time TIMESTAMP WITH TIME ZONE');
    expect(cols.at(-1)).toMatch(/^_exact STRUCT\(/);
    expect(cols.filter((c) => c.includes('_text'))).toEqual([]);
    const [row] = await w.all(`SELECT epoch("time") AS t, amount_in, _exact.amount_in AS exact FROM read_parquet($1)`, [
      join(lake, jan(1)),
    ]);
    expect(row).toEqual({ t: T0 + 5, amount_in: 1.5, exact: '1.50' });
  });

  it('splits a month into files of at most the file size, in key order across files, ties on a second included', async () => {
    // 25 swaps stored out of order, three of them in one second.
    const secs = [...Array(22).keys()].map((k) => ((k * 7) % 22) * 60).concat([600, 600]);
    for (const [i, s] of secs.entries()) await swap(s, 'r1', `s${String(s).padStart(5, '0')}-${i}`);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    expect(await writeLake(w, dir, { fileRows: 10 })).toBe(3);
    expect(files()).toEqual([jan(1), jan(2), jan(3)]);
    const all = [...(await ids(jan(1))), ...(await ids(jan(2))), ...(await ids(jan(3)))];
    expect(all.length).toBe(24);
    expect([(await ids(jan(1))).length, (await ids(jan(2))).length]).toEqual([10, 10]);
    expect(all).toEqual([...all].sort());
  });

  it('rewrites only the open file of the month a run added to; full files and earlier months keep their inode', async () => {
    const dec = 'dodoex/swaps/chain=bsc/month=2025-12/part-00001.parquet';
    await swaps([...Array(12).keys()].map((k) => k * 60).concat([-5]));
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    await writeLake(w, dir, { fileRows: 10 });
    expect(files()).toEqual([dec, jan(1), jan(2)]);
    const before = [mark(jan(1)), mark(dec)];
    // The next run re-reads from the 11th swap on (its window) and adds one.
    await swap(12 * 60, 'r2');
    await pending({ chain: 56, ds: 'dodoex.swaps', from: T0 + 10 * 60, runs: ['r2'] });
    expect(await writeLake(w, dir, { fileRows: 10 })).toBe(1);
    expect([mark(jan(1)), mark(dec)]).toEqual(before);
    expect(await ids(jan(2))).toEqual(['s600', 's660', 's720']);
    // The open file fills up, then a run past it starts the next file and leaves it alone.
    for (let k = 13; k < 20; k++) await swap(k * 60, 'r3');
    await pending({ chain: 56, ds: 'dodoex.swaps', from: T0 + 13 * 60, runs: ['r3'] });
    await writeLake(w, dir, { fileRows: 10 });
    expect((await ids(jan(2))).length).toBe(10);
    const full = mark(jan(2));
    await swap(25 * 60, 'r4');
    await pending({ chain: 56, ds: 'dodoex.swaps', from: T0 + 25 * 60, runs: ['r4'] });
    expect(await writeLake(w, dir, { fileRows: 10 })).toBe(1);
    expect(mark(jan(2))).toBe(full);
    expect(await ids(jan(3))).toEqual(['s1500']);
  });

  it('keeps the key range of each full file a rewrite reaches into: rows added or taken out there move no other row to another file', async () => {
    await swaps([60, 120, 180, 240, 300, 360, 420, 480, 540, 600]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    await writeLake(w, dir, { fileRows: 3 });
    expect(await Promise.all([1, 2, 3, 4].map((n) => ids(jan(n))))).toEqual([
      ['s60', 's120', 's180'],
      ['s240', 's300', 's360'],
      ['s420', 's480', 's540'],
      ['s600'],
    ]);
    // A reorganisation from second 150: s180 and s300 taken back, three swaps inside the second file's range and one
    // after the last.
    await w.exec(`DELETE FROM dodoex.swaps WHERE id IN ('s180', 's300')`);
    for (const s of [250, 260, 270, 610]) await swap(s, 'r2');
    await pending({ chain: 56, ds: 'dodoex.swaps', from: T0 + 150, runs: ['r2'] });
    await writeLake(w, dir, { fileRows: 3 });
    // Written out by hand: each row that stayed is in the file it was in, the second file holds 5 rows of its range.
    expect(await Promise.all([1, 2, 3, 4].map((n) => ids(jan(n))))).toEqual([
      ['s60', 's120'],
      ['s240', 's250', 's260', 's270', 's360'],
      ['s420', 's480', 's540'],
      ['s600', 's610'],
    ]);
    // A full file whose range the rewrite empties goes; the files after it keep their numbers and rows.
    await w.exec(`DELETE FROM dodoex.swaps WHERE id IN ('s60', 's120')`);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: T0, runs: [] });
    await writeLake(w, dir, { fileRows: 3 });
    expect(files()).toEqual([jan(2), jan(3), jan(4)]);
    expect(await ids(jan(4))).toEqual(['s600', 's610']);
  });

  it('keeps the key range of a month’s last file when it is full, in the window’s month and in a later one alike', async () => {
    // January and February of three rows each: each month one full file.
    await swaps([60, 120, 180, FEB - T0 + 60, FEB - T0 + 120, FEB - T0 + 180]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    await writeLake(w, dir, { fileRows: 3 });
    expect(files()).toEqual([jan(1), feb(1)]);
    // A reorganisation from January's second 150 on adds a row inside each month's full file and one after February's.
    for (const s of [150, FEB - T0 + 90, FEB - T0 + 240]) await swap(s, 'r2');
    await pending({ chain: 56, ds: 'dodoex.swaps', from: T0 + 150, runs: ['r2'] });
    await writeLake(w, dir, { fileRows: 3 });
    // Written out by hand: each full file takes the new row of its range; the row after February's starts its next file.
    expect(files()).toEqual([jan(1), feb(1), feb(2)]);
    expect(await ids(jan(1))).toEqual(['s60', 's120', 's150', 's180']);
    expect(await ids(feb(1))).toEqual([
      `s${FEB - T0 + 60}`,
      `s${FEB - T0 + 90}`,
      `s${FEB - T0 + 120}`,
      `s${FEB - T0 + 180}`,
    ]);
    expect(await ids(feb(2))).toEqual([`s${FEB - T0 + 240}`]);
  });

  it('keeps the rows of a file that share their second with the next one, when a run rewrites from after them', async () => {
    for (const id of ['a', 'b', 'c']) await swap(100, 'r1', id);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    await writeLake(w, dir, { fileRows: 2 });
    expect([await ids(jan(1)), await ids(jan(2))]).toEqual([['a', 'b'], ['c']]);
    await swap(105, 'r2', 'd');
    await pending({ chain: 56, ds: 'dodoex.swaps', from: T0 + 101, runs: ['r2'] });
    await writeLake(w, dir, { fileRows: 2 });
    expect([await ids(jan(1)), await ids(jan(2))]).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
  });

  it('takes rows a reorganization removed out of the lake, and a month left empty out of the folder', async () => {
    await swaps([0, 60, FEB - T0 + 5]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    await writeLake(w, dir);
    await w.exec(`DELETE FROM dodoex.swaps WHERE id IN ('s60', $1)`, [`s${FEB - T0 + 5}`]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: T0 + 30, runs: ['r2'] });
    await writeLake(w, dir);
    expect(files()).toEqual([jan(1)]);
    expect(await ids(jan(1))).toEqual(['s0']);
    expect(existsSync(join(lake, 'dodoex/swaps/chain=bsc/month=2026-02'))).toBe(false);
  });

  it('writes nothing for a chain with no rows in the window, and still clears the entry', async () => {
    await swaps([0]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: FEB + 5 * DAY, runs: ['r1'] });
    expect(await writeLake(w, dir)).toBe(0);
    expect(files()).toEqual([]);
    expect(await w.all('SELECT * FROM _pool_export.lake_pending')).toEqual([]);
  });

  it('a reader of the folders never sees a row twice or misses one while runs add to full and open files', async () => {
    const reader = await (await DuckDBInstance.create(':memory:')).connect();
    const glob = join(lake, 'dodoex/swaps/*/*/*.parquet');
    let stored = 0;
    const seen: { n: number; distinct: number; lo: number; hi: number }[] = [];
    let torn = 0;
    let writing = true;
    const read = (async () => {
      while (writing) {
        if (!existsSync(join(lake, 'dodoex/swaps'))) {
          await new Promise((r) => setTimeout(r, 1));
          continue;
        }
        const lo = stored;
        let r: Record<string, unknown>;
        try {
          r = (
            await reader.runAndReadAll(`SELECT count(*) AS n, count(DISTINCT id) AS d FROM read_parquet('${glob}')`)
          ).getRowObjectsJson()[0]!;
        } catch (e) {
          // DuckDB opens a file more than once in a query (its footer, then its row groups): a query that spans the
          // file's replacement can fail to read it, and is asked again (`npx tsx bench/reader-race.ts`). It returns
          // no rows: what the promise is about.
          if (!TORN_READ.test(String(e))) throw e;
          torn++;
          continue;
        }
        seen.push({ n: Number(r.n), distinct: Number(r.d), lo, hi: stored });
      }
    })();
    let secs = 0;
    for (let run = 0; run < 40; run++) {
      const start = secs;
      for (let k = 0; k < 3; k++) await swap((secs += 60), `r${run}`);
      // Every run re-reads the last two minutes before its rows, as the re-read window does.
      await pending({ chain: 56, ds: 'dodoex.swaps', from: T0 + start - 120, runs: [`r${run}`] });
      await writeLake(w, dir, { fileRows: 7 });
      stored = secs / 60;
    }
    writing = false;
    await read;
    reader.closeSync();
    expect(seen.length).toBeGreaterThan(10);
    // Most reads end well: a failed one is the exception a reader retries, not the rule.
    expect(torn).toBeLessThan(seen.length);
    for (const s of seen) {
      expect(s.n, JSON.stringify(s)).toBe(s.distinct);
      expect(s.n, JSON.stringify(s)).toBeGreaterThanOrEqual(s.lo);
      expect(s.n, JSON.stringify(s)).toBeLessThanOrEqual(s.hi + 3);
    }
    // The file count grew with the rows (120 rows, 7 per file), not with the 40 runs.
    expect(files().length).toBe(Math.ceil(120 / 7));
  });

  it('compact rewrites a month whose files are more than its rows need, in key order, and leaves a full one alone', async () => {
    await swaps([0, 60, 120, 180, 240, FEB - T0]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    await writeLake(w, dir, { fileRows: 2 });
    expect(files()).toEqual([jan(1), jan(2), jan(3), feb(1)]);
    const february = mark(feb(1));
    expect(await compactLake(w, dir, 10)).toEqual({ partitions: 1, files: 3 });
    expect(files()).toEqual([jan(1), feb(1)]);
    expect(await ids(jan(1))).toEqual(['s0', 's60', 's120', 's180', 's240']);
    expect(mark(feb(1))).toBe(february);
    expect(await compactLake(w, dir, 10)).toEqual({ partitions: 0, files: 0 });
  });

  it('finishes a publish that a dead process left halfway, before it writes anything else', async () => {
    await swaps([0]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    await writeLake(w, dir);
    // What a process killed between its renames leaves: the journal, one file still under .tmp, one to remove.
    mkdirSync(join(lake, '.tmp', 'w1'), { recursive: true });
    writeFileSync(join(lake, '.tmp', 'w1', 'a.parquet'), 'new');
    writeFileSync(join(lake, 'stale.parquet'), 'old');
    writeFileSync(
      join(lake, '.tmp', 'publish.json'),
      JSON.stringify({
        renames: [
          [
            join(lake, '.tmp', 'w1', 'a.parquet'),
            join(lake, 'dodoex/swaps/chain=bsc/month=2026-03/part-00001.parquet'),
          ],
        ],
        removes: [join(lake, 'stale.parquet')],
      }),
    );
    recoverPublish(lake);
    expect(files()).toEqual([jan(1), 'dodoex/swaps/chain=bsc/month=2026-03/part-00001.parquet']);
    expect(existsSync(join(lake, '.tmp'))).toBe(false);
  });

  it('publishes one file by its rename alone, and several steps through the journal', () => {
    // The journal's temporary name taken by a folder: a publish that writes the journal fails, one that needs none not.
    mkdirSync(join(lake, '.tmp', 'publish.json.tmp'), { recursive: true });
    mkdirSync(join(lake, '.tmp', 'w1'), { recursive: true });
    const staged = (name: string) => {
      writeFileSync(join(lake, '.tmp', 'w1', name), name);
      return join(lake, '.tmp', 'w1', name);
    };
    const target = (m: string) => join(lake, `dodoex/swaps/chain=bsc/month=2026-${m}/part-00001.parquet`);
    publish(lake, { renames: [[staged('a'), target('03')]], removes: [] });
    expect(readFileSync(target('03'), 'utf8')).toBe('a');
    // Two files, or one with a file to remove: journalled, so this one fails before it renames anything.
    const two = {
      renames: [[staged('b'), target('04')] as [string, string], [staged('c'), target('05')] as [string, string]],
      removes: [],
    };
    expect(() => publish(lake, two)).toThrow();
    expect(() => publish(lake, { renames: [[staged('d'), target('06')]], removes: [target('03')] })).toThrow();
    expect([target('04'), target('05'), target('06')].filter((f) => existsSync(f))).toEqual([]);
    expect(readFileSync(target('03'), 'utf8')).toBe('a');
  });
});

describe('state, history and snapshots', () => {
  async function pairs(ids: string[], run: string, takenAt: string) {
    for (const id of ids) {
      await w.exec('DELETE FROM dodoex.pairs WHERE id = $1', [id]);
      await w.exec(`INSERT INTO dodoex.pairs (id, chain_id, _run_id, _taken_at) VALUES ($1, 56, $2, $3::TIMESTAMPTZ)`, [
        id,
        run,
        takenAt,
      ]);
    }
  }

  it('writes a mutable dataset\u2019s state whole, and its history in a table path of its own, by month', async () => {
    await pairs(['p2', 'p1'], 'r1', '2026-01-31 10:00:00+00');
    await pending({ chain: 56, ds: 'dodoex.pairs', from: null, runs: ['r1'] });
    await writeLake(w, dir);
    await pairs(['p1', 'p3'], 'r2', '2026-02-01 00:00:00+00');
    await pending({ chain: 56, ds: 'dodoex.pairs', from: null, runs: ['r2'] });
    expect(await writeLake(w, dir)).toBe(2);
    expect(files()).toEqual([
      'dodoex/pairs/chain=bsc/data.parquet',
      'dodoex/pairs_history/chain=bsc/month=2026-01/part-00001.parquet',
      'dodoex/pairs_history/chain=bsc/month=2026-02/part-00001.parquet',
    ]);
    expect(await ids('dodoex/pairs/chain=bsc/data.parquet')).toEqual(['p1', 'p2', 'p3']);
    // The warehouse holds p1 of run r2 only; the history keeps what run r1 read of it.
    expect(await ids('dodoex/pairs_history/chain=bsc/month=2026-01/part-00001.parquet')).toEqual(['p1', 'p2']);
    expect(await ids('dodoex/pairs_history/chain=bsc/month=2026-02/part-00001.parquet')).toEqual(['p1', 'p3']);
  });

  it('adds a run\u2019s history to the open file without searching it, and a second write of that run does not add it twice', async () => {
    const history = (n: number) => `dodoex/pairs_history/chain=bsc/month=2026-01/part-0000${n}.parquet`;
    const runs = async (file: string) =>
      (
        await w.all(`SELECT id || '/' || _run_id AS r FROM read_parquet($1) ORDER BY _run_id, id`, [join(lake, file)])
      ).map((r) => String(r.r));
    // Each run writes the lake of the rows it committed, as a run does: the first write of its own rows.
    const run = async (id: string, ids: string[], time: string) => {
      await pairs(ids, id, time);
      await pending({ chain: 56, ds: 'dodoex.pairs', from: null, runs: [id] });
      await writeLake(w, dir, { fileRows: 2, freshRun: id });
    };
    await run('fresh-1', ['p1'], '2026-01-02 00:00:00+00');
    await run('fresh-2', ['p2'], '2026-01-02 00:15:00+00');
    expect(files().filter((f) => f.includes('history'))).toEqual([history(1)]);
    expect(await runs(history(1))).toEqual(['p1/fresh-1', 'p2/fresh-2']);
    const full = mark(history(1));
    await run('fresh-3', ['p1', 'p3'], '2026-01-02 00:30:00+00');
    expect(files().filter((f) => f.includes('history'))).toEqual([history(1), history(2)]);
    expect(mark(history(1))).toBe(full);
    expect(await runs(history(2))).toEqual(['p1/fresh-3', 'p3/fresh-3']);
    // Its entry listed again (its clearing lost), and written again by the same run: its files are searched.
    await pending({ chain: 56, ds: 'dodoex.pairs', from: null, runs: ['fresh-3'] });
    await writeLake(w, dir, { fileRows: 2, freshRun: 'fresh-3' });
    expect(files().filter((f) => f.includes('history'))).toEqual([history(1), history(2)]);
    expect(await runs('dodoex/pairs_history/chain=bsc/month=2026-01/*.parquet')).toEqual([
      'p1/fresh-1',
      'p2/fresh-2',
      'p1/fresh-3',
      'p3/fresh-3',
    ]);
    expect(await ids('dodoex/pairs/chain=bsc/data.parquet')).toEqual(['p1', 'p2', 'p3']);
  });

  async function zoo(run: string, at: string) {
    await w.exec(
      `INSERT INTO dodoex.dodo_zoos (id, chain_id, _run_id, _taken_at) VALUES ('z', 56, $1, $2::TIMESTAMPTZ)`,
      [run, at],
    );
    await pending({ chain: 56, ds: 'dodoex.dodo_zoos', from: null, runs: [run] });
  }
  const zoos = (n: number) => `dodoex/dodo_zoos/chain=bsc/month=2026-01/part-0000${n}.parquet`;

  it('adds each run\u2019s snapshot to its month\u2019s open file until it is full, then starts the next', async () => {
    await zoo('r1', '2026-01-02 00:00:00+00');
    await writeLake(w, dir, { fileRows: 2 });
    await zoo('r2', '2026-01-02 00:15:00+00');
    await writeLake(w, dir, { fileRows: 2 });
    expect(files()).toEqual([zoos(1)]);
    const full = mark(zoos(1));
    await zoo('r3', '2026-01-02 00:30:00+00');
    await writeLake(w, dir, { fileRows: 2 });
    expect(files()).toEqual([zoos(1), zoos(2)]);
    expect(mark(zoos(1))).toBe(full);
    expect(
      (await w.all(`SELECT _run_id AS r FROM read_parquet($1, hive_partitioning = false)`, [join(lake, zoos(1))])).map(
        (r) => r.r,
      ),
    ).toEqual(['r1', 'r2']);
  });

  it('writes the snapshots of one run on several chains, each chain its own rows in its own months', async () => {
    // bsc in January, polygon in January and February, ethereum in February: one run, written in one lake write.
    const rows: [number, string, string][] = [
      [56, 'a', '2026-01-31 23:59:00+00'],
      [137, 'b', '2026-01-31 23:59:30+00'],
      [137, 'c', '2026-02-01 00:00:30+00'],
      [1, 'd', '2026-02-01 00:01:00+00'],
    ];
    for (const [chain, id, at] of rows)
      await w.exec(
        `INSERT INTO dodoex.dodo_zoos (id, chain_id, _run_id, _taken_at) VALUES ($1, $2, 'r1', $3::TIMESTAMPTZ)`,
        [id, chain, at],
      );
    for (const chain of [1, 56, 137]) await pending({ chain, ds: 'dodoex.dodo_zoos', from: null, runs: ['r1'] });
    await writeLake(w, dir);
    const part = (chain: string, month: string) => `dodoex/dodo_zoos/chain=${chain}/month=${month}/part-00001.parquet`;
    expect(files()).toEqual([
      part('bsc', '2026-01'),
      part('ethereum', '2026-02'),
      part('polygon', '2026-01'),
      part('polygon', '2026-02'),
    ]);
    expect(await Promise.all(files().map(async (f) => (await ids(f)).join()))).toEqual(['a', 'd', 'b', 'c']);
  });

  it('drops a snapshot the warehouse replaced (taken again at the same block), in a full file too', async () => {
    const at = async (run: string, block: number, time: string) => {
      // As the sink's 'snapshot' replace does: one snapshot per block.
      await w.exec('DELETE FROM dodoex.dodo_zoos WHERE chain_id = 56 AND _block = $1', [block]);
      await w.exec(
        `INSERT INTO dodoex.dodo_zoos (id, chain_id, _block, _run_id, _taken_at) VALUES ('z', 56, $1, $2, $3::TIMESTAMPTZ)`,
        [block, run, time],
      );
      await pending({ chain: 56, ds: 'dodoex.dodo_zoos', from: null, runs: [run] });
      await writeLake(w, dir, { fileRows: 2 });
    };
    await at('r1', 100, '2026-01-02 00:00:00+00');
    await at('r2', 200, '2026-01-02 00:15:00+00');
    await at('r3', 300, '2026-01-02 00:30:00+00');
    // r4 takes block 200 again: r2's snapshot, in the full first file, goes; r3's stays where it is.
    await at('r4', 200, '2026-01-02 00:45:00+00');
    const runs = await w.all(
      `SELECT _run_id AS r FROM read_parquet($1, hive_partitioning = false) ORDER BY _taken_at`,
      [join(lake, 'dodoex/dodo_zoos/chain=bsc/month=2026-01/*.parquet')],
    );
    expect(runs.map((r) => r.r)).toEqual(['r1', 'r3', 'r4']);
  });

  it('adds a run\u2019s snapshot to the open file unsearched while no other run\u2019s row left, and searches once one did', async () => {
    // Statements that read the files' rows to find what to replace (the lake write in one lane: the warehouse's).
    const searches: string[] = [];
    const all = w.all.bind(w);
    w.all = (sql, params) => {
      if (sql.includes("filename = '_file'")) searches.push(sql);
      return all(sql, params);
    };
    const at = async (run: string, block: number, time: string) => {
      // As the sink's 'snapshot' replace does, and as it tells the lake: rows of another run left only at a block
      // stored already.
      const left = await w.exec('DELETE FROM dodoex.dodo_zoos WHERE chain_id = 56 AND _block = $1', [block]);
      await w.exec(
        `INSERT INTO dodoex.dodo_zoos (id, chain_id, _block, _run_id, _taken_at) VALUES ('z', 56, $1, $2, $3::TIMESTAMPTZ)`,
        [block, run, time],
      );
      await pending({ chain: 56, ds: 'dodoex.dodo_zoos', from: null, runs: [run], dropped: left > 0 });
      searches.length = 0;
      await writeLake(w, dir, { fileRows: 2, freshRun: run, lanes: 1 });
      return searches.length;
    };
    const runs = async () =>
      (
        await w.all(`SELECT _run_id AS r FROM read_parquet($1, hive_partitioning = false) ORDER BY _taken_at`, [
          join(lake, 'dodoex/dodo_zoos/chain=bsc/month=2026-01/*.parquet'),
        ])
      ).map((r) => r.r);
    expect(await at('f1', 100, '2026-01-02 00:00:00+00')).toBe(0);
    expect(await at('f2', 200, '2026-01-02 00:15:00+00')).toBe(0);
    const full = mark(zoos(1));
    expect(await at('f3', 300, '2026-01-02 00:30:00+00')).toBe(0);
    expect(files()).toEqual([zoos(1), zoos(2)]);
    expect(mark(zoos(1))).toBe(full);
    expect(await runs()).toEqual(['f1', 'f2', 'f3']);
    // f4 takes block 200 again: the files are searched, and f2's snapshot leaves the full file.
    expect(await at('f4', 200, '2026-01-02 00:45:00+00')).toBe(1);
    expect(await runs()).toEqual(['f1', 'f3', 'f4']);
  });

  it('writes a run\u2019s rows once however often its entry is written (a run killed before clearing it)', async () => {
    await zoo('r1', '2026-01-02 00:00:00+00');
    await writeLake(w, dir);
    await pending({ chain: 56, ds: 'dodoex.dodo_zoos', from: null, runs: ['r1'] });
    await writeLake(w, dir);
    expect(
      (await w.all(`SELECT count(*) AS n FROM read_parquet($1, hive_partitioning = false)`, [join(lake, zoos(1))]))[0]!
        .n,
    ).toBe('1');
  });

  it('clears an entry of a dataset it does not know, writing nothing', async () => {
    await pending({ chain: 56, ds: 'dodoex.gone', from: null, runs: ['r1'] });
    expect(await writeLake(w, dir)).toBe(0);
    expect(files()).toEqual([]);
    expect(await w.all('SELECT * FROM _pool_export.lake_pending')).toEqual([]);
  });
});

/** What the lake's DuckDB shows: which database answered (the views file, or memory), and a few counts. */
async function seen(tracked = DEFAULT_TRACKED) {
  const db = await openLakeDb(dir, tracked);
  try {
    const [r] = (
      await db.conn.runAndReadAll(
        'SELECT current_database() AS db, (SELECT count(*) FROM dodoex.swaps) AS swaps, (SELECT count(*) FROM dodoex.pairs) AS pairs, (SELECT count(*) FROM reports.trusted_tokens) AS trusted',
      )
    ).getRowObjectsJson();
    return r;
  } finally {
    db.close();
  }
}

describe('compression', () => {
  /** The codecs of a lake file's column chunks. */
  async function codecs(file: string): Promise<string[]> {
    const rows = await w.all('SELECT DISTINCT compression AS c FROM parquet_metadata($1) ORDER BY 1', [
      join(lake, file),
    ]);
    return rows.map((r) => String(r.c));
  }

  it('writes a file in snappy where it replaces one of less than 64 KiB, and in zstd where it replaces none or a larger one', async () => {
    await swaps([0, 5]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    await writeLake(w, dir);
    // A month's first file replaces none.
    expect(await codecs(jan(1))).toEqual(['ZSTD']);
    await swaps([9], 'r2');
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r2'] });
    await writeLake(w, dir);
    expect(await ids(jan(1))).toEqual(['s0', 's5', 's9']);
    expect(await codecs(jan(1))).toEqual(['SNAPPY']);
    // 20,000 swaps of distinct hashes make the open file larger than 64 KiB in either codec.
    await w.exec(
      `INSERT INTO dodoex.swaps (id, "timestamp", hash, chain_id, _run_id) SELECT 'b' || i, $1 + i, md5(i::VARCHAR), 56, 'r3' FROM range(20000) t(i)`,
      [T0 + 100],
    );
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r3'] });
    await writeLake(w, dir);
    expect(files()).toEqual([jan(1)]);
    expect(statSync(join(lake, jan(1))).size).toBeGreaterThan(64 * 1024);
    await swaps([99_000], 'r4');
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r4'] });
    await writeLake(w, dir);
    expect((await ids(jan(1))).length).toBe(20_004);
    expect(await codecs(jan(1))).toEqual(['ZSTD']);
  });

  it('writes a state file in zstd the first time, and in snappy when it replaces a small one', async () => {
    const state = 'dodoex/pairs/chain=bsc/data.parquet';
    const write = async (id: string, run: string) => {
      await w.exec(`INSERT INTO dodoex.pairs (id, chain_id, _run_id, _taken_at) VALUES ($1, 56, $2, now())`, [id, run]);
      await pending({ chain: 56, ds: 'dodoex.pairs', from: null, runs: [run] });
      await writeLake(w, dir);
    };
    await write('p1', 'r1');
    expect(await codecs(state)).toEqual(['ZSTD']);
    await write('p2', 'r2');
    expect(await ids(state)).toEqual(['p1', 'p2']);
    expect(await codecs(state)).toEqual(['SNAPPY']);
  });
});

describe('readers', () => {
  it('refuse a lake of the earlier layout with the command that migrates it', async () => {
    mkdirSync(join(lake, 'dodoex/swaps/chain=bsc/day=2026-01-01'), { recursive: true });
    writeFileSync(join(lake, 'dodoex/swaps/chain=bsc/day=2026-01-01/data.parquet'), 'x');
    const conn = await (await DuckDBInstance.create(':memory:')).connect();
    await expect(defineDatasetViews(conn, dir)).rejects.toThrow(
      /the lake .* was written by an earlier pool-export \(layout 1; this one reads layout 2\); run `pool-export migrate`/,
    );
    conn.closeSync();
  });

  it('open the views file when it was built for the lake and settings as they are, and define the views anew otherwise', async () => {
    await swaps([5]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    await writeLake(w, dir);
    await writeViewsFile(dir);
    const trusted = String(DEFAULT_TRACKED.tokens.length);
    expect(await seen()).toEqual({ db: 'views', swaps: '1', pairs: '0', trusted });
    // Other tracked settings: the file's trusted tokens would be wrong.
    expect(await seen({ ...DEFAULT_TRACKED, tokens: DEFAULT_TRACKED.tokens.slice(1) })).toEqual({
      db: 'memory',
      swaps: '1',
      pairs: '0',
      trusted: String(DEFAULT_TRACKED.tokens.length - 1),
    });
    // A dataset that got its first files since the file was built: the file would show it empty.
    await w.exec(`INSERT INTO dodoex.pairs (id, chain_id, _run_id, _taken_at) VALUES ('p', 56, 'r2', now())`);
    await pending({ chain: 56, ds: 'dodoex.pairs', from: null, runs: ['r2'] });
    await writeLake(w, dir);
    expect(await seen()).toEqual({ db: 'memory', swaps: '1', pairs: '1', trusted });
  });

  it('build the views file again only when what it was built for changed', async () => {
    await swaps([5]);
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r1'] });
    await writeLake(w, dir);
    const file = dataFolder(dir).views;
    const inode = () => statSync(file).ino;
    // A folder of an earlier version: its views file, under the lake's name, goes when the views are written.
    writeFileSync(dataFolder(dir).viewsBefore, 'the views file of an earlier version');
    writeFileSync(`${dataFolder(dir).viewsBefore}.wal`, '');
    expect(await writeViewsFile(dir)).toBe(true);
    const old = dataFolder(dir).viewsBefore;
    expect([existsSync(file), existsSync(old), existsSync(`${old}.wal`)]).toEqual([true, false, false]);
    const built = inode();
    // New rows of a table that has files: its view reads them by its glob, and the file is left as it is.
    await swaps([6], 'r2');
    await pending({ chain: 56, ds: 'dodoex.swaps', from: null, runs: ['r2'] });
    await writeLake(w, dir);
    expect(await writeViewsFile(dir)).toBe(false);
    expect(inode()).toBe(built);
    // Other tracked settings, then a table's first files: built again each time.
    const fewer = { ...DEFAULT_TRACKED, tokens: DEFAULT_TRACKED.tokens.slice(1) };
    expect(await writeViewsFile(dir, fewer)).toBe(true);
    expect(await writeViewsFile(dir, fewer)).toBe(false);
    // The key the file was built for is kept beside it, so that a run finds it current without opening it; a views
    // file put there since (here the one of other settings, copied over it) is not taken on that key's word.
    expect(existsSync(dataFolder(dir).viewsKey)).toBe(true);
    const other = join(dir, 'views-fewer.duckdb');
    cpSync(file, other);
    expect(await writeViewsFile(dir)).toBe(true);
    cpSync(other, file);
    expect(await writeViewsFile(dir)).toBe(true);
    expect(await seen()).toMatchObject({ db: 'views', trusted: String(DEFAULT_TRACKED.tokens.length) });
    expect(await writeViewsFile(dir, fewer)).toBe(true);
    await w.exec(`INSERT INTO dodoex.pairs (id, chain_id, _run_id, _taken_at) VALUES ('p', 56, 'r3', now())`);
    await pending({ chain: 56, ds: 'dodoex.pairs', from: null, runs: ['r3'] });
    await writeLake(w, dir);
    expect(await writeViewsFile(dir, fewer)).toBe(true);
    expect(await seen(fewer)).toEqual({
      db: 'views',
      swaps: '2',
      pairs: '1',
      trusted: String(fewer.tokens.length),
    });
  });

  it('a stop before or during the write publishes no half entry: what it left stays listed, and the next write ends it', async () => {
    // Two chains' swaps over two months, enough rows that the write is under way when the stop comes.
    await w.exec(
      `INSERT INTO dodoex.swaps (id, "timestamp", amount_in, amount_in_text, chain_id, _run_id)
       SELECT 's' || i || '-' || c, ${T0} + i * 20, 1.5, '1.50', c, 'r1' FROM range(200000) t(i), (VALUES (56), (1)) v(c)`,
    );
    for (const chain of [56, 1]) await pending({ chain, ds: SWAPS.name, from: null, runs: ['r1'] });
    const before = new AbortController();
    before.abort();
    expect(await writeLake(w, dir, { signal: before.signal })).toBe(0);
    expect(files()).toEqual([]);
    // The stop comes while the first COPY of the warehouse's own connection runs (a COPY of 200,000 rows takes far
    // longer than one turn of the event loop).
    const during = new AbortController();
    const exec = w.exec.bind(w);
    w.exec = (sql, params) => {
      const running = exec(sql, params);
      if (/^\s*COPY/i.test(sql) && !during.signal.aborted) setImmediate(() => during.abort());
      return running;
    };
    // It fails (DuckDB's INTERRUPT, or the cleanup of a staging folder the interrupted COPY was still writing): the
    // run that stopped it treats any failure after a stop as a write left to the next run.
    await writeLake(w, dir, { signal: during.signal }).catch(() => undefined);
    w.exec = exec;
    expect(during.signal.aborted).toBe(true);
    // Every entry still listed is one whose files are not all published; each listed or not, the next write ends them.
    const left = Number((await w.all('SELECT count(*) AS n FROM _pool_export.lake_pending'))[0]!.n);
    expect(left).toBeGreaterThan(0);
    await writeLake(w, dir);
    expect(Number((await w.all('SELECT count(*) AS n FROM _pool_export.lake_pending'))[0]!.n)).toBe(0);
    expect(existsSync(join(lake, '.tmp'))).toBe(false);
    const inLake = await w.all(
      `SELECT chain, count(*)::INTEGER AS n, count(DISTINCT id)::INTEGER AS d FROM read_parquet($1, hive_partitioning = true) GROUP BY ALL ORDER BY ALL`,
      [join(lake, 'dodoex', 'swaps', '**', '*.parquet')],
    );
    expect(inLake).toEqual([
      { chain: 'bsc', n: 200_000, d: 200_000 },
      { chain: 'ethereum', n: 200_000, d: 200_000 },
    ]);
  });
});

describe('several chains in one COPY', () => {
  /** Each lake file under `root`: its column names and types, its codecs, and its rows in the file's order. */
  async function lakeOf(root: string): Promise<Record<string, unknown>> {
    const all: Record<string, unknown> = {};
    if (!existsSync(root)) return all;
    const paths = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.parquet')).sort();
    for (const f of paths) {
      const path = join(root, f);
      all[f] = {
        columns: (await w.all('SELECT name, type FROM parquet_schema($1)', [path])).map((r) => `${r.name} ${r.type}`),
        codecs: (await w.all('SELECT DISTINCT compression AS c FROM parquet_metadata($1) ORDER BY 1', [path])).map(
          (r) => r.c,
        ),
        rows: await w.all(
          'SELECT * EXCLUDE (file_row_number) FROM read_parquet($1, hive_partitioning = false, file_row_number = true) ORDER BY file_row_number',
          [path],
        ),
      };
    }
    return all;
  }

  /** The COPY statements a warehouse and its lanes send from now on. */
  function copies(into: Warehouse): string[] {
    const seen: string[] = [];
    const wrap = <T extends Pick<Warehouse, 'exec' | 'all'>>(sql: T): T => {
      const [exec, all] = [sql.exec.bind(sql), sql.all.bind(sql)];
      const note = (text: string) => {
        if (/^\s*COPY/.test(text)) seen.push(text);
      };
      sql.exec = (text, params) => {
        note(text);
        return exec(text, params);
      };
      sql.all = (text, params) => {
        note(text);
        return all(text, params);
      };
      return sql;
    };
    wrap(into);
    const lane = into.lane.bind(into);
    into.lane = async () => wrap(await lane());
    return seen;
  }

  /**
   * Three runs of pairs (state and history) and of a snapshot on four chains, each written as the run that committed
   * it writes the lake (`freshRun`), with files of at most 3 rows; ids come in no order. In r3, bsc's and ethereum's
   * open files are full (their rows start file 2), optimism's has room, and polygon's passes 3 rows (its entry cuts it).
   */
  async function runs(into: Warehouse, folder: string, opts: { readonly lanes?: number } = {}): Promise<number[]> {
    const written: number[] = [];
    const batches: [string, [number, string][]][] = [
      [
        'r1',
        [
          [56, 'p2'],
          [1, 'p9'],
          [56, 'p1'],
          [137, 'p5'],
          [10, 'p1'],
        ],
      ],
      [
        'r2',
        [
          [137, 'p4'],
          [1, 'p8'],
          [56, 'p3'],
          [1, 'p6'],
        ],
      ],
      [
        'r3',
        [
          [56, 'p0'],
          [137, 'p7'],
          [137, 'p6'],
          [10, 'p2'],
          [137, 'p3'],
          [137, 'p2'],
          [1, 'p7'],
        ],
      ],
    ];
    for (const [n, [run, rows]] of batches.entries()) {
      const at = `2026-01-0${n + 2} 00:00:00+00`;
      for (const [chain, id] of rows) {
        await into.exec('DELETE FROM dodoex.pairs WHERE chain_id = $1 AND id = $2', [chain, id]);
        await into.exec(
          `INSERT INTO dodoex.pairs (id, chain_id, _run_id, _taken_at, volume_usd, volume_usd_text) VALUES ($1, $2, $3, $4::TIMESTAMPTZ, 1.5, '1.50')`,
          [id, chain, run, at],
        );
        await into.exec(
          `INSERT INTO dodoex.dodo_zoos (id, chain_id, _run_id, _taken_at) VALUES ($1, $2, $3, $4::TIMESTAMPTZ)`,
          [`z-${id}`, chain, run, at],
        );
      }
      for (const chain of new Set(rows.map(([c]) => c)))
        for (const ds of [PAIRS.name, ZOOS.name])
          await into.exec(
            `INSERT INTO _pool_export.lake_pending (chain_id, dataset, from_seq, runs, dropped) VALUES ($1, $2, NULL, [$3], false)`,
            [chain, ds, run],
          );
      written.push(await writeLake(into, folder, { fileRows: 3, freshRun: run, ...opts }));
    }
    return written;
  }

  it('writes the same files, rows, order, columns and codecs as one COPY per chain', async () => {
    // One DuckDB thread, where a COPY of several chains is made (`chain-writes.ts`). The oracle writes each chain's
    // files apart, from its own warehouse of the same rows: on one lane (no COPY of several chains), and, as its runs
    // are no longer the process's fresh ones, searching the open files for their rows rather than adding to them.
    await w.exec('SET threads = 1');
    const oracleDir = join(dir, 'oracle');
    const oracle = await Warehouse.open(oracleDir);
    try {
      await oracle.ensureTables([PAIRS, ZOOS]);
      const batched = copies(w);
      expect(await runs(w, dir)).toEqual(await runs(oracle, oracleDir, { lanes: 1 }));
      // Each run: one COPY of its chains' state of pairs, one of their history, one of their snapshot; in r3, two of each
      // of the last two: optimism's and polygon's open files, and bsc's and ethereum's next ones. Polygon's pass the file
      // size: each written by its entry (its one-file COPY, found too large, then a sorted stage and a COPY per file).
      expect(batched.filter((c) => c.includes('PARTITION_BY')).length).toBe(3 + 3 + 5);
      expect(batched.length).toBe(11 + 2 * 4);
      const got = await lakeOf(lake);
      expect(Object.keys(got)).toEqual([
        'dodoex/dodo_zoos/chain=bsc/month=2026-01/part-00001.parquet',
        'dodoex/dodo_zoos/chain=bsc/month=2026-01/part-00002.parquet',
        'dodoex/dodo_zoos/chain=ethereum/month=2026-01/part-00001.parquet',
        'dodoex/dodo_zoos/chain=ethereum/month=2026-01/part-00002.parquet',
        'dodoex/dodo_zoos/chain=optimism/month=2026-01/part-00001.parquet',
        'dodoex/dodo_zoos/chain=polygon/month=2026-01/part-00001.parquet',
        'dodoex/dodo_zoos/chain=polygon/month=2026-01/part-00002.parquet',
        'dodoex/pairs/chain=bsc/data.parquet',
        'dodoex/pairs/chain=ethereum/data.parquet',
        'dodoex/pairs/chain=optimism/data.parquet',
        'dodoex/pairs/chain=polygon/data.parquet',
        'dodoex/pairs_history/chain=bsc/month=2026-01/part-00001.parquet',
        'dodoex/pairs_history/chain=bsc/month=2026-01/part-00002.parquet',
        'dodoex/pairs_history/chain=ethereum/month=2026-01/part-00001.parquet',
        'dodoex/pairs_history/chain=ethereum/month=2026-01/part-00002.parquet',
        'dodoex/pairs_history/chain=optimism/month=2026-01/part-00001.parquet',
        'dodoex/pairs_history/chain=polygon/month=2026-01/part-00001.parquet',
        'dodoex/pairs_history/chain=polygon/month=2026-01/part-00002.parquet',
      ]);
      expect(got).toEqual(await lakeOf(join(oracleDir, 'lake')));
      // The state in id order; the history in the order of when each row was taken, then id.
      expect(await ids('dodoex/pairs/chain=polygon/data.parquet')).toEqual(['p2', 'p3', 'p4', 'p5', 'p6', 'p7']);
      expect(await ids('dodoex/pairs_history/chain=bsc/month=2026-01/part-00001.parquet')).toEqual(['p1', 'p2', 'p3']);
      expect(await ids('dodoex/pairs_history/chain=bsc/month=2026-01/part-00002.parquet')).toEqual(['p0']);
      expect(Number((await w.all('SELECT count(*) AS n FROM _pool_export.lake_pending'))[0]!.n)).toBe(0);
    } finally {
      await oracle.close();
    }
  });

  it('leaves a write of more than CHAIN_ROWS rows in all to the entries, and writes it whole', async () => {
    await w.exec('SET threads = 1');
    const seen = copies(w);
    // 10,001 pairs over two chains, one run: their state and their history each pass the bound.
    await w.exec(
      `INSERT INTO dodoex.pairs (id, chain_id, _run_id, _taken_at)
       SELECT 'p' || i, CASE WHEN i % 2 = 0 THEN 56 ELSE 1 END, 'big', '2026-01-02 00:00:00+00'::TIMESTAMPTZ FROM range($1) t(i)`,
      [CHAIN_ROWS + 1],
    );
    for (const chain of [56, 1]) await pending({ chain, ds: PAIRS.name, from: null, runs: ['big'] });
    expect(await writeLake(w, dir, { freshRun: 'big' })).toBe(4);
    expect(seen.filter((c) => c.includes('PARTITION_BY'))).toEqual([]);
    const rows = await w.all(
      `SELECT count(*)::INTEGER AS n, count(DISTINCT chain_id || '/' || id)::INTEGER AS d FROM read_parquet($1)`,
      [join(lake, 'dodoex', 'pairs_history', '**', '*.parquet')],
    );
    expect(rows).toEqual([{ n: CHAIN_ROWS + 1, d: CHAIN_ROWS + 1 }]);
    expect((await ids('dodoex/pairs/chain=bsc/data.parquet')).length).toBe(5_001);
  });

  it('counts the rows of the files it would replace against CHAIN_ROWS', async () => {
    await w.exec('SET threads = 1');
    const add = async (run: string, n: number, from: number) => {
      await w.exec(
        `INSERT INTO dodoex.pairs (id, chain_id, _run_id, _taken_at)
         SELECT 'p' || i, CASE WHEN i % 2 = 0 THEN 56 ELSE 1 END, $1, '2026-01-02 00:00:00+00'::TIMESTAMPTZ FROM range($2, $3) t(i)`,
        [run, from, from + n],
      );
      for (const chain of [56, 1]) await pending({ chain, ds: PAIRS.name, from: null, runs: [run] });
      const seen = copies(w);
      await writeLake(w, dir, { freshRun: run });
      // The COPYs of several chains: of the history (one run's rows) and of the state.
      const chains = seen.filter((c) => c.includes('PARTITION_BY'));
      const history = chains.filter((c) => c.includes(`_run_id = '${run}'`)).length;
      return { history, state: chains.length - history };
    };
    // The first run's rows, within the bound: their history and the state in one COPY each. The next run adds 20 rows
    // to files that hold all but 10 of the bound already: each chain's history and state are then written apart.
    expect(await add('first', CHAIN_ROWS - 10, 0)).toEqual({ history: 1, state: 1 });
    expect(await add('next', 20, CHAIN_ROWS - 10)).toEqual({ history: 0, state: 0 });
    const rows = await w.all(`SELECT count(DISTINCT chain_id || '/' || id)::INTEGER AS d FROM read_parquet($1)`, [
      join(lake, 'dodoex', 'pairs_history', '**', '*.parquet'),
    ]);
    expect(rows).toEqual([{ d: CHAIN_ROWS + 10 }]);
  });
});
