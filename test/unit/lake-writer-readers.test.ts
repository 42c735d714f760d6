/**
 * The lake writer's readers on a real warehouse file: the views file a second DuckDB instance opens while the writer
 * publishes, a lake of the earlier layout refused, and what the lake shows its readers.
 */
import { cpSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { dataFolder } from '../../src/config/data-folder.ts';
import { DEFAULT_TRACKED } from '../../src/config/tracked.ts';
import { defineDatasetViews } from '../../src/lake/lake-db.ts';
import { writeLake } from '../../src/lake/lake-writer.ts';
import { openLakeDb, writeViewsFile } from '../../src/reports/views.ts';
import {
  dir,
  files,
  lake,
  pending,
  SWAPS,
  swaps,
  T0,
  useLakeWriterFixture,
  w,
} from '../support/lake-writer-fixture.ts';

useLakeWriterFixture();

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
