/**
 * The lake writer on a real warehouse file: which files each pending entry writes, where, with which rows in which
 * order, which files it leaves alone (same inode, same bytes), and what it clears. Expected paths and rows are written
 * out by hand from the layout in `lake/layout.ts`'s header, and the files are read back with DuckDB's own Parquet
 * reader. This file: events; state, compression, readers and several chains are in the lake-writer-*.test.ts beside
 * it, the fixture in test/support/lake-writer-fixture.ts.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { compactLake } from '../../src/lake/compact.ts';
import { publish, recoverPublish } from '../../src/lake/lake-files.ts';
import { writeLake } from '../../src/lake/lake-writer.ts';
import { TORN_READ } from '../../src/reports/torn-read.ts';
import {
  DAY,
  dir,
  FEB,
  feb,
  files,
  ids,
  jan,
  lake,
  mark,
  pending,
  swap,
  swaps,
  T0,
  useLakeWriterFixture,
  w,
} from '../support/lake-writer-fixture.ts';

useLakeWriterFixture();

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
