/** The Parquet lake, the report views and the query and report commands, against a real export of the sandbox. */
import { tableFromIPC } from 'apache-arrow';
import { parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pl from 'nodejs-polars';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { datasetDir } from '../../src/lake/layout.ts';
import { openLakeDb } from '../../src/lake/lake-db.ts';
import { startSandbox, type SandboxProcess } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { qt } from '../../src/store/ddl.ts';
import * as X from '../../src/util/exact.ts';
import { cli, sandboxEnv } from '../support/export-check.ts';
import { allRows, post, waitForRequests } from '../support/sandbox-client.ts';

let sb: SandboxProcess;
let dir: string;
let data: string;
let env: Record<string, string>;

beforeAll(async () => {
  sb = await startSandbox(['--scale', '1500', '--chains', '56,137']);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-lake-'));
  data = join(dir, 'data');
  env = sandboxEnv(sb, data);
  const r = await cli(['run', '--chains', 'bsc,polygon'], env);
  if (r.code !== 0) throw new Error(r.stderr);
}, 180_000);
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function parquetFiles(root: string, skip = 'history'): string[] {
  try {
    return readdirSync(root).flatMap((n) => {
      const p = join(root, n);
      if (n.endsWith('.parquet')) return [p];
      return n !== skip && statSync(p).isDirectory() ? parquetFiles(p, skip) : [];
    });
  } catch {
    return [];
  }
}

async function warehouseCounts(): Promise<Map<string, number>> {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    const out = new Map<string, number>();
    for (const ds of DATASETS) out.set(ds.name, Number((await w.all(`SELECT count(*) AS n FROM ${qt(ds.table)}`))[0]!.n));
    return out;
  } finally {
    await w.close();
  }
}

describe('the Parquet lake', () => {
  it('is read alike by DuckDB, nodejs-polars and hyparquet, row for row, for every dataset', async () => {
    const counts = await warehouseCounts();
    const db = await openLakeDb(data);
    let checked = 0;
    try {
      for (const ds of DATASETS) {
        const root = ds.kind === 'mutable' ? join(datasetDir(join(data, 'lake'), ds), 'current') : datasetDir(join(data, 'lake'), ds);
        const files = parquetFiles(root);
        if (counts.get(ds.name) === 0) {
          expect(files, ds.name).toEqual([]);
          continue;
        }
        const viaDuck = Number((await db.conn.runAndReadAll(`SELECT count(*) AS n FROM ${qt(ds.table)}`)).getRowObjectsJson()[0]!.n);
        let viaPolars = 0;
        let viaHyparquet = 0;
        for (const f of files) {
          viaPolars += pl.readParquet(f).height;
          const buf = readFileSync(f);
          const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
          viaHyparquet += Number((await parquetMetadataAsync(ab)).num_rows);
        }
        expect([viaDuck, viaPolars, viaHyparquet], ds.name).toEqual([counts.get(ds.name), counts.get(ds.name), counts.get(ds.name)]);
        // A sample row: the same id and exact numeric text through all three readers.
        const f = files[0]!;
        const buf = readFileSync(f);
        const first = (await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength), rowEnd: 1, compressors }))[0] as Record<string, unknown>;
        const text = ds.columns.find((c) => c.cls === 'decimal' || c.cls === 'bigint');
        // nodejs-polars reads Decimal columns but cannot hand them to JavaScript: compare the exact text columns.
        const polarsRow = pl.readParquet(f).select('id', ...(text ? [`${text.column}_text`] : [])).head(1).toRecords()[0] as Record<string, unknown>;
        const duckRow = (await db.conn.runAndReadAll(`SELECT * FROM read_parquet('${f}') LIMIT 1`)).getRowObjectsJson()[0]!;
        expect([polarsRow.id, first.id], ds.name).toEqual([duckRow.id, duckRow.id]);
        if (text) expect([polarsRow[`${text.column}_text`], first[`${text.column}_text`]], `${ds.name}.${text.column}_text`).toEqual([duckRow[`${text.column}_text`], duckRow[`${text.column}_text`]]);
        checked++;
      }
    } finally {
      db.close();
    }
    expect(checked).toBeGreaterThan(30);
  }, 120_000);

  it('keeps types: timestamps as timestamps, decimals as DECIMAL(38,18) with the exact text beside them', async () => {
    const db = await openLakeDb(data);
    try {
      const cols = (await db.conn.runAndReadAll('DESCRIBE list.liquidity')).getRowObjectsJson();
      const type = (c: string) => cols.find((x) => x.column_name === c)?.column_type;
      expect([type('tvl'), type('tvl_text'), type('_taken_at'), type('chain_id')]).toEqual(['DECIMAL(38,18)', 'VARCHAR', 'TIMESTAMP WITH TIME ZONE', 'INTEGER']);
    } finally {
      db.close();
    }
    const f = parquetFiles(datasetDir(join(data, 'lake'), DATASETS.find((d) => d.name === 'list.liquidity')!))[0]!;
    const df = pl.readParquet(f);
    expect(String(df.getColumn('_taken_at').dtype)).toMatch(/Datetime/);
    expect(String(df.getColumn('tvl').dtype)).toMatch(/Decimal/);
    const buf = readFileSync(f);
    const row = (await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength), rowEnd: 1, compressors }))[0] as Record<string, unknown>;
    expect(row._taken_at).toBeInstanceOf(Date);
  });
});

describe('report views agree with figures computed from the sandbox\'s own data', () => {
  const report = async (name: string, extra: string[] = []) => {
    const r = await cli(['report', name, '--format', 'json', ...extra], env);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as Record<string, any>[];
  };
  const close = (a: number, b: number) => expect(Math.abs(a - b) <= Math.abs(b) * 1e-9 + 1e-12, `${a} vs ${b}`).toBe(true);

  it('volume_daily: day data and the sum of swaps, per pool and day', async () => {
    const rows = (await report('volume_daily', ['--chain', 'bsc'])).filter((r) => r.swaps > 3);
    const swaps = await allRows(sb, 56, 'dodoex', 'Swap');
    expect(rows.length).toBeGreaterThan(3);
    for (const r of rows.slice(0, 4)) {
      const mine = swaps.filter((s) => s.pair === r.pool && new Date(Number(s.timestamp) * 1000).toISOString().slice(0, 10) === r.day);
      const sum = (k: string) => Number(X.format(mine.reduce<X.Dec>((a, s) => X.add(a, X.parse(s[k])), X.dec(0))));
      close(r.volume_base, sum('baseVolume'));
      close(r.volume_usd, sum('volumeUSD'));
      expect(r.swaps).toBe(mine.length);
    }
  });

  it('tvl_list and top_pools: the service\'s TVL of each pool', async () => {
    const list = await post(sb, `/graphql?opname=FetchLiquidityList&apikey=${sb.apiKey}`, { query: '{ liquidity_list(where: { chainIds: [137], pageSize: 1000, filterState: { filterTypes: ["CLASSICAL", "DVM", "DSP", "GSP", "DPP"] } }) { lqList { id pair { tvl } } } }' });
    const tvl = new Map((list.body.data!.liquidity_list.lqList as { id: string; pair: { tvl: string } }[]).map((i) => [i.id, i.pair.tvl]));
    const rows = await report('tvl_list', ['--chain', 'polygon']);
    expect(rows.length).toBe(tvl.size);
    for (const r of rows) expect(r.tvl_text).toBe(tvl.get(r.pool));
    const top = (await report('top_pools', ['--chain', 'polygon'])).find((r) => r.rank === 1)!;
    const best = [...tvl].sort((a, b) => X.compare(X.parse(b[1]), X.parse(a[1])))[0]!;
    expect(top.pool).toBe(best[0]);
  });

  it('apy: fees over TVL, annualized, from the pool\'s day data', async () => {
    const days = await allRows(sb, 56, 'dodoex', 'PairDayData');
    const rows = (await report('apy', ['--chain', 'bsc'])).filter((r) => r.fee_apy !== null).slice(0, 5);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      const d = days.find((x) => x.pairAddress === r.pool && new Date(x.date * 1000).toISOString().slice(0, 10) === r.day)!;
      const n = (k: string) => Number(d[k]);
      close(r.fee_apy, ((n('feeBase') * n('baseUsdPrice') + n('feeQuote') * n('quoteUsdPrice')) / (n('baseTokenReserve') * n('baseUsdPrice') + n('quoteTokenReserve') * n('quoteUsdPrice'))) * 365);
    }
  });

  it('smart_route_volume: orders per day', async () => {
    const orders = (await allRows(sb, 137, 'dodoex', 'OrderHistory')).filter((o) => o.source === 'SMART_ROUTE');
    const rows = await report('smart_route_volume', ['--chain', 'polygon', '--from', '2025-12-01', '--to', '2025-12-10']);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.orders).toBe(orders.filter((o) => new Date(Number(o.timestamp) * 1000).toISOString().slice(0, 10) === r.day).length);
  });

  it('lists every report with what it answers and its grain', async () => {
    const r = await cli(['report', '--list'], env);
    for (const name of ['tvl_list', 'tvl_daily', 'tvl_by_chain_type', 'tvl_by_token', 'volume_daily', 'volume_hourly', 'volume_by_token', 'apy', 'top_pools', 'new_pools', 'positions_by_user', 'crowdpooling_daily', 'smart_route_volume']) {
      expect(r.stdout).toMatch(new RegExp(`^${name}\\s+\\S.*\\n\\s+grain: \\S`, 'm'));
    }
  });
});

describe('query and report commands', () => {
  it('write CSV, JSON, Parquet and Arrow IPC', async () => {
    const out = join(dir, 'out');
    const sql = 'SELECT id, amount_in_text, amount_in FROM dodoex.swaps ORDER BY id LIMIT 5';
    const json = JSON.parse((await cli(['query', sql, '--format', 'json'], env)).stdout) as Record<string, unknown>[];
    expect(json).toHaveLength(5);
    const csv = (await cli(['query', sql, '--format', 'csv'], env)).stdout.trim().split('\n');
    expect(csv[0]).toBe('id,amount_in_text,amount_in');
    expect(csv[1]!.startsWith(`${json[0]!.id},`)).toBe(true);
    expect((await cli(['query', sql, '--format', 'arrow', '--out', `${out}.arrow`], env)).code).toBe(0);
    const arrow = tableFromIPC(readFileSync(`${out}.arrow`));
    expect([arrow.numRows, String(arrow.getChild('id')!.get(0))]).toEqual([5, json[0]!.id]);
    expect((await cli(['report', 'volume_daily', '--format', 'parquet', '--out', `${out}.parquet`], env)).code).toBe(0);
    expect(pl.readParquet(`${out}.parquet`).height).toBeGreaterThan(0);
  });

  it('compacts per-run part files without changing what readers see', async () => {
    const sql = 'SELECT count(*) AS n, count(DISTINCT _run_id) AS runs FROM list.liquidity';
    expect((await cli(['run', '--jobs', 'liquidity', '--chains', 'bsc,polygon'], env)).code).toBe(0);
    const before = JSON.parse((await cli(['query', sql, '--format', 'json'], env)).stdout);
    const root = datasetDir(join(data, 'lake'), DATASETS.find((d) => d.name === 'list.liquidity')!);
    expect(parquetFiles(root).length).toBeGreaterThan(2);
    const r = await cli(['compact'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/compacted \d+ files in \d+ partitions/);
    expect(parquetFiles(root).length).toBe(2);
    expect(JSON.parse((await cli(['query', sql, '--format', 'json'], env)).stdout)).toEqual(before);
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
    const running = cli(['run', '--chains', 'bsc,polygon', '--jobs', 'events,state'], env);
    // Query once the run is under way (it holds the warehouse from before its first request).
    await waitForRequests(sb, 3);
    const q = await cli(['query', 'SELECT count(*) AS n FROM dodoex.swaps', '--format', 'json'], env);
    const stillRunning = (await Promise.race([running.then(() => false), new Promise((r) => setTimeout(() => r(true), 10))])) as boolean;
    expect(q.code, q.stderr).toBe(0);
    expect(Number((JSON.parse(q.stdout) as { n: number }[])[0]!.n)).toBeGreaterThan(0);
    expect(stillRunning).toBe(true);
    expect((await running).code).toBe(0);
    await sb.control('faults', { latencyMs: 0 });
  }, 120_000);
});
