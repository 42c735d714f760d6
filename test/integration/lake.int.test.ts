/**
 * The Parquet lake, the report views and the query and report commands, against a real export of the sandbox
 * (test/support/exported-lake.ts); `lake ddl` is tested in lake-ddl.int.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import pl from 'nodejs-polars';
import { describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { dataFolder } from '../../src/config/data-folder.ts';
import { tableDir } from '../../src/lake/layout.ts';
import { openLakeDb, reportViews } from '../../src/reports/views.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { qt } from '../../src/util/sql.ts';
import { cli } from '../support/cli-process.ts';
import { nullNumbers } from '../support/export-check.ts';
import { data, dir, env, parquetFiles, sb, useExportedLake, warehouseCounts } from '../support/exported-lake.ts';
import { waitForRequests } from '../support/sandbox-client.ts';

useExportedLake();

describe('the Parquet lake', () => {
  it('is read alike by DuckDB, nodejs-polars and hyparquet, row for row, for every dataset', async () => {
    const counts = await warehouseCounts();
    const db = await openLakeDb(data);
    let checked = 0;
    try {
      for (const ds of DATASETS) {
        const files = parquetFiles(tableDir(join(data, 'lake'), ds));
        if (counts.get(ds.name) === 0) {
          expect(files, ds.name).toEqual([]);
          continue;
        }
        const viaDuck = Number(
          (await db.conn.runAndReadAll(`SELECT count(*) AS n FROM ${qt(ds.table)}`)).getRowObjectsJson()[0]!.n,
        );
        let viaPolars = 0;
        let viaHyparquet = 0;
        for (const f of files) {
          viaPolars += pl.readParquet(f).height;
          const buf = readFileSync(f);
          const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
          viaHyparquet += Number((await parquetMetadataAsync(ab)).num_rows);
        }
        expect([viaDuck, viaPolars, viaHyparquet], ds.name).toEqual([
          counts.get(ds.name),
          counts.get(ds.name),
          counts.get(ds.name),
        ]);
        // A sample row: the same id and exact numeric text through all three readers.
        const f = files[0]!;
        const buf = readFileSync(f);
        const first = (
          await parquetReadObjects({
            file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength),
            rowEnd: 1,
            compressors,
          })
        )[0] as Record<string, unknown>;
        const text = ds.columns.find((c) => c.cls === 'decimal' || c.cls === 'bigint' || c.cls === 'raw');
        const polars = pl.readParquet(f);
        const duckRow = (
          await db.conn.runAndReadAll(
            `SELECT id${text ? `, _exact.${text.column} AS exact` : ''} FROM read_parquet('${f}') LIMIT 1`,
          )
        ).getRowObjectsJson()[0]!;
        expect([polars.getColumn('id').get(0), first.id], ds.name).toEqual([duckRow.id, duckRow.id]);
        // The exact text, in the `_exact` struct: a struct to polars and an object to hyparquet.
        if (text)
          expect(
            [
              polars.getColumn('_exact').struct.field(text.column).get(0),
              (first._exact as Record<string, unknown>)[text.column],
            ],
            `${ds.name}._exact.${text.column}`,
          ).toEqual([duckRow.exact, duckRow.exact]);
        checked++;
      }
    } finally {
      db.close();
    }
    expect(checked).toBeGreaterThan(30);
  }, 120_000);

  it('carries plain numbers that every reader hands over (DOUBLE, BIGINT), the same types as the warehouse, with the exact texts in one struct', async () => {
    const db = await openLakeDb(data);
    const w = await Warehouse.open(data, { readOnly: true });
    try {
      for (const [table, cols] of [
        ['list.liquidity', ['tvl', 'base_token_decimals', 'i', '_taken_at', 'chain_id']],
        ['dodoex.swaps', ['amount_in', 'timestamp', 'log_index', 'updated_at']],
        ['dodoex.pairs', ['tx_count', 'i', 'created_at_block_number']],
      ] as const) {
        const types = async (rows: Record<string, unknown>[]) =>
          cols.map((c) => rows.find((x) => x.column_name === c)?.column_type);
        const lake = await types((await db.conn.runAndReadAll(`DESCRIBE ${table}`)).getRowObjectsJson());
        const warehouse = await types(await w.all(`DESCRIBE ${table}`));
        expect(lake, table).toEqual(warehouse);
      }
      const cols = (await db.conn.runAndReadAll('DESCRIBE list.liquidity')).getRowObjectsJson();
      const type = (c: string) => cols.find((x) => x.column_name === c)?.column_type;
      expect([type('tvl'), type('base_token_decimals'), type('i'), type('_taken_at'), type('chain_id')]).toEqual([
        'DOUBLE',
        'BIGINT',
        'DOUBLE',
        'TIMESTAMP WITH TIME ZONE',
        'INTEGER',
      ]);
      // The exact texts come last, one struct field per number of the warehouse; no `_text` column is left.
      expect(cols.at(-3)?.column_name).toBe('_exact');
      expect(String(type('_exact'))).toContain('tvl VARCHAR');
      expect(cols.filter((c) => String(c.column_name).endsWith('_text'))).toEqual([]);
      expect(cols.slice(-2).map((c) => c.column_name)).toEqual(['chain', 'month']);
      // Events carry their time as a timestamp beside the integer, and sit in the month folder of that time.
      const [swaps] = (
        await db.conn.runAndReadAll(
          `SELECT count(*) AS n, count(*) FILTER (WHERE epoch("time") = "timestamp" AND month = strftime(make_timestamp("timestamp" * 1000000), '%Y-%m')) AS ok FROM dodoex.swaps`,
        )
      ).getRowObjectsJson();
      expect(Number(swaps!.n)).toBeGreaterThan(0);
      expect(swaps!.ok).toBe(swaps!.n);
    } finally {
      db.close();
      await w.close();
    }
    const f = parquetFiles(tableDir(join(data, 'lake'), DATASETS.find((d) => d.name === 'list.liquidity')!))[0]!;
    const df = pl.readParquet(f);
    expect(String(df.getColumn('_taken_at').dtype)).toMatch(/Datetime/);
    // nodejs-polars hands the numbers to JavaScript as numbers, equal to the exact text read as a double.
    const tvl = df.getColumn('tvl').get(0) as number;
    expect(typeof tvl).toBe('number');
    expect(tvl).toBe(Number(df.getColumn('_exact').struct.field('tvl').get(0)));
    expect(String(df.getColumn('base_token_decimals').dtype)).toMatch(/Int64/);
    const buf = readFileSync(f);
    const row = (
      await parquetReadObjects({
        file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength),
        rowEnd: 1,
        compressors,
      })
    )[0] as Record<string, unknown>;
    expect(row._taken_at).toBeInstanceOf(Date);
    expect(typeof row.tvl).toBe('number');
  });

  it('leaves a views file that any DuckDB session opens read-only and queries: every dataset and report view in it', async () => {
    const instance = await DuckDBInstance.create(dataFolder(data).views, { access_mode: 'READ_ONLY' });
    const conn = await instance.connect();
    try {
      const views = (
        await conn.runAndReadAll(
          "SELECT schema_name || '.' || view_name AS v FROM duckdb_views() WHERE NOT internal ORDER BY ALL",
        )
      ).getRowObjectsJson();
      const names = views.map((r) => String(r.v));
      // Every report, and every dataset whose lake has files (the others are empty tables there).
      for (const r of reportViews()) expect(names).toContain(`reports.${r.name}`);
      const counts = await warehouseCounts();
      for (const ds of DATASETS.filter((d) => (counts.get(d.name) ?? 0) > 0)) expect(names).toContain(ds.table);
      let rows = 0;
      for (const v of names) {
        const n = Number((await conn.runAndReadAll(`SELECT count(*) AS n FROM ${qt(v)}`)).getRowObjectsJson()[0]!.n);
        rows += n;
      }
      expect(rows).toBeGreaterThan(0);
      // The views file reads the same rows as the warehouse.
      for (const ds of DATASETS.filter((d) => d.kind === 'event' && (counts.get(d.name) ?? 0) > 0)) {
        const n = (await conn.runAndReadAll(`SELECT count(*) AS n FROM ${qt(ds.table)}`)).getRowObjectsJson()[0]!.n;
        expect(Number(n), ds.name).toBe(counts.get(ds.name));
      }
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });

  it('holds no NULL number where the upstream sent one, in any table of the warehouse or dataset of the lake', async () => {
    expect(await nullNumbers(data)).toEqual([]);
  });
});

describe('report views', () => {
  it('lists every report with what it answers and its grain', async () => {
    const r = await cli(['report', '--list'], { ...env, COLUMNS: '80' });
    for (const name of [
      'tvl_list',
      'tvl_daily',
      'tvl_by_chain_type',
      'tvl_by_token',
      'volume_daily',
      'volume_hourly',
      'volume_by_token',
      'apy',
      'top_pools',
      'new_pools',
      'positions_by_user',
      'crowdpooling_daily',
      'smart_route_volume',
      'suspicious_pools',
    ]) {
      expect(r.stdout).toMatch(new RegExp(`^${name}\\s+\\S.*\\n(\\s+\\S.*\\n)*\\s+grain: \\S`, 'm'));
    }
    // Wrapped to the terminal's width (COLUMNS when it is not one).
    expect(r.stdout.split('\n').filter((l) => [...l].length > 80)).toEqual([]);
    // Each report's display columns, the ones a table shows first, are columns of its view.
    const db = await openLakeDb(data);
    try {
      for (const v of reportViews()) {
        const cols = (await db.conn.runAndReadAll(`DESCRIBE reports.${v.name}`))
          .getRowObjectsJson()
          .map((c) => c.column_name);
        expect(v.display.length, v.name).toBeGreaterThan(2);
        expect(
          v.display.filter((c) => !cols.includes(c)),
          v.name,
        ).toEqual([]);
      }
    } finally {
      db.close();
    }
  });
});

describe('query and report commands', () => {
  it('write CSV, JSON, Parquet and Arrow IPC', async () => {
    const out = join(dir, 'out');
    const sql = 'SELECT id, _exact.amount_in AS amount_in_text, amount_in FROM dodoex.swaps ORDER BY id LIMIT 5';
    const json = JSON.parse((await cli(['query', sql, '--format', 'json'], env)).stdout) as Record<string, unknown>[];
    expect(json).toHaveLength(5);
    const csv = (await cli(['query', sql, '--format', 'csv'], env)).stdout.trim().split('\n');
    expect(csv[0]).toBe('id,amount_in_text,amount_in');
    expect(csv[1]!.startsWith(`${json[0]!.id},`)).toBe(true);
    const toArrow = await cli(['query', sql, '--format', 'arrow', '--out', `${out}.arrow`], env);
    expect(toArrow.code).toBe(0);
    // Where the result went, and how many rows, on stderr; stdout holds nothing.
    expect([toArrow.stdout, toArrow.stderr]).toEqual(['', `wrote 5 rows as arrow to ${out}.arrow\n`]);
    const arrow = tableFromIPC(readFileSync(`${out}.arrow`));
    expect([arrow.numRows, String(arrow.getChild('id')!.get(0))]).toEqual([5, json[0]!.id]);
    const toParquet = await cli(['report', 'volume_daily', '--format', 'parquet', '--out', `${out}.parquet`], env);
    expect(toParquet.code).toBe(0);
    const height = pl.readParquet(`${out}.parquet`).height;
    expect(height).toBeGreaterThan(0);
    expect(toParquet.stderr).toBe(`wrote ${height} rows as parquet to ${out}.parquet\n`);
  });

  it('adds each run\u2019s snapshot of the list to its month\u2019s file, so the file count stays; compact finds nothing', async () => {
    const sql = 'SELECT count(*) AS n, count(DISTINCT _run_id) AS runs FROM list.liquidity';
    const root = tableDir(join(data, 'lake'), DATASETS.find((d) => d.name === 'list.liquidity')!);
    const files = parquetFiles(root).sort();
    const before = JSON.parse((await cli(['query', sql, '--format', 'json'], env)).stdout);
    // A new block: a snapshot taken again at the same block replaces the one before it (in the lake too).
    await sb.control('advance', { blocks: 5 });
    expect((await cli(['run', '--jobs', 'liquidity', '--chains', 'bsc,polygon'], env)).code).toBe(0);
    const after = JSON.parse((await cli(['query', sql, '--format', 'json'], env)).stdout);
    expect(Number(after[0].runs)).toBe(Number(before[0].runs) + 1);
    expect(Number(after[0].n)).toBeGreaterThan(Number(before[0].n));
    expect(parquetFiles(root).sort()).toEqual(files);
    // A glob over the state of a mutable dataset reads the state alone: the history is a table path of its own.
    const pairs = tableDir(join(data, 'lake'), DATASETS.find((d) => d.name === 'dodoex.pairs')!);
    const glob = (
      await cli(['query', `SELECT count(*) AS n FROM read_parquet('${pairs}/**/*.parquet')`, '--format', 'json'], env)
    ).stdout;
    const view = (await cli(['query', 'SELECT count(*) AS n FROM dodoex.pairs', '--format', 'json'], env)).stdout;
    expect(JSON.parse(glob)).toEqual(JSON.parse(view));
    const r = await cli(['compact'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/compacted 0 files in 0 partitions/);
    expect(JSON.parse((await cli(['query', sql, '--format', 'json'], env)).stdout)).toEqual(after);
  }, 60_000);

  it('refuses anything but one SELECT, with exit code 2', async () => {
    const r = await cli(['query', 'DROP TABLE dodoex.swaps'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/query takes one read-only SELECT statement/);
  });

  it('answers while an export is running, without meeting a lock', async () => {
    await sb.control('advance', { blocks: 3000 });
    await sb.control('faults', { latencyMs: 300 });
    await sb.control('stats', {});
    let finished = false;
    const running = cli(['run', '--chains', 'bsc,polygon', '--jobs', 'events,state'], env).then((r) => {
      finished = true;
      return r;
    });
    // Query once the run is under way (it holds the warehouse from before its first request).
    await waitForRequests(sb, 3);
    const q = await cli(['query', 'SELECT count(*) AS n FROM dodoex.swaps', '--format', 'json'], env);
    // The run had not ended when the query's answer came (its process exit is seen only after it ends).
    const stillRunning = !finished;
    expect(q.code, q.stderr).toBe(0);
    expect(Number((JSON.parse(q.stdout) as { n: number }[])[0]!.n)).toBeGreaterThan(0);
    expect(stillRunning).toBe(true);
    expect((await running).code).toBe(0);
    await sb.control('faults', { latencyMs: 0 });
  }, 120_000);
});
