/**
 * The lake writer on a real warehouse file, for state, history and snapshots, and the compression of its files:
 * expected paths and rows written out by hand from the layout in `lake/layout.ts`'s header, read back with DuckDB's
 * own Parquet reader.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeLake } from '../../src/lake/lake-writer.ts';
import {
  dir,
  files,
  ids,
  jan,
  lake,
  mark,
  pending,
  swaps,
  T0,
  useLakeWriterFixture,
  w,
} from '../support/lake-writer-fixture.ts';

useLakeWriterFixture();

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
