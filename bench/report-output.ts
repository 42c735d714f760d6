/**
 * What a reader pays for a report by its output format (`make bench`, part of section `lake`): one chain at sandbox
 * scale 2,000,000 swaps (100,000 in the quick run), every job backfilled with the default settings, then every report
 * three ways:
 *   - the SQL alone: its whole result read in a new DuckDB, the views bound, no value converted (`reportSecs`);
 *   - `pool-export report NAME --format csv`, stdout not a terminal;
 *   - `pool-export report NAME`, the table format, stdout not a terminal (every row drawn, up to TABLE_CELLS cells).
 * And `query` of 300,000 swaps both ways. Target 17: the table at most 2 × the CSV of the same rows, for each.
 */
import { join } from 'node:path';
import { openLakeDb, reportViews } from '../src/reports/views.ts';
import { startSandbox } from '../src/sandbox/spawn.ts';
import type { LakeBenchContext } from './lake-bench.ts';
import { median } from './util.ts';

const NOW = '2026-01-01T00:00:00Z';
/** The chain of the measurement (bsc). */
const CHAIN = 56;

/** Seconds and row count of one report's SQL alone, in a new DuckDB: the median of three. */
async function sqlAlone(dataDir: string, sql: string): Promise<{ secs: number; rows: number }> {
  const xs: number[] = [];
  let rows = 0;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const db = await openLakeDb(dataDir);
    try {
      rows = (await db.conn.runAndReadAll(sql)).currentRowCount;
    } finally {
      db.close();
    }
    xs.push((performance.now() - t) / 1000);
  }
  return { secs: median(xs), rows };
}

export async function reportOutputBench(cx: LakeBenchContext): Promise<void> {
  const scale = cx.quick ? 100_000 : 2_000_000;
  cx.log(`lake: every report as a table and as CSV, one chain at scale ${scale.toLocaleString('en-US')}`);
  const sb = await startSandbox(['--scale', String(scale), '--chains', String(CHAIN), '--now', NOW]);
  const dir = join(cx.work, 'report-output');
  try {
    const r = await cx.exportRun(sb.url, sb.apiKey, dir, ['--chains', 'bsc']);
    if (r.code !== 0) throw new Error(`backfill at scale ${scale} failed (exit ${r.code}): ${r.out.slice(-500)}`);
  } finally {
    await sb.stop();
  }
  const env = { ...process.env, POOL_EXPORT_DATA_DIR: dir };
  const cases = [
    ...reportViews().map((v) => ({
      what: `report ${v.name}`,
      sql: `SELECT * FROM reports.${v.name} ORDER BY ALL`,
      args: ['report', v.name],
    })),
    {
      what: 'query of 300,000 swaps',
      sql: 'SELECT * FROM dodoex.swaps ORDER BY timestamp, id LIMIT 300000',
      args: ['query', 'SELECT * FROM dodoex.swaps ORDER BY timestamp, id LIMIT 300000'],
    },
  ];
  let worst = { what: '', ratio: 0 };
  for (const c of cases) {
    const sql = await sqlAlone(dir, c.sql);
    const csv = await cx.timed([...c.args, '--format', 'csv'], env);
    const table = await cx.timed(c.args, env);
    const ratio = table.secs / csv.secs;
    if (ratio > worst.ratio) worst = { what: c.what, ratio };
    cx.line({
      what: `${c.what} as a table, ${scale.toLocaleString('en-US')} swaps`,
      rows: sql.rows,
      secs: table.secs.toFixed(2),
      rate: '',
      ratio: `${ratio.toFixed(2)} × csv`,
      note: `csv ${csv.secs.toFixed(2)} s; the SQL alone ${sql.secs.toFixed(2)} s; peak ${table.peakMb.toFixed(0)} MB as a table, ${csv.peakMb.toFixed(0)} MB as csv`,
    });
  }
  cx.target({
    n: 17,
    what: `every report, and a query of 300,000 rows, as a table (stdout a file), one chain at scale ${scale.toLocaleString('en-US')}`,
    want: '≤ 2 × the same as --format csv, for each',
    got: `worst ${worst.ratio.toFixed(2)} × (${worst.what})`,
    met: worst.ratio <= 2,
  });
}
