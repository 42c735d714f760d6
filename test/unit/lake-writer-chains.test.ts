/**
 * The lake writer on a real warehouse file, several chains written in one COPY: each chain's files as they would be
 * alone, read back with DuckDB's own Parquet reader.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHAIN_ROWS } from '../../src/lake/chain-writes.ts';
import { writeLake } from '../../src/lake/lake-writer.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { dir, ids, lake, PAIRS, pending, useLakeWriterFixture, w, ZOOS } from '../support/lake-writer-fixture.ts';

useLakeWriterFixture();

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
