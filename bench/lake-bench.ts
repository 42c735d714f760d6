/**
 * The lake as its readers and a schedule pay for it (`make bench`, section `lake`): four targets, each a ratio against a
 * baseline measured in the same run.
 *   7. `query "SELECT 1"` on a demo-sized lake against `--version`: the price of opening the lake.
 *   8. every report on that lake against the same report over a compacted copy of it (one file per table, the shape
 *      DuckDB reads best): the price of the layout.
 *   9. the file count and the reports' time on a one-chain lake after 100 scheduled-style runs (advance the sandbox
 *      100 blocks, run every job; 10 in the quick run), against the same before them: whether the cost grows with runs.
 *  10. an incremental run after 100 new blocks: its lake write against the whole run, and the run against a no-op run.
 * Target 17, every report as a table against the same as CSV at the 2,000,000-swap size, is the section `reports`
 * (bench/report-output.ts).
 * A report's time is its whole read in a new DuckDB (the views bound, every row fetched), the median of three.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DATASETS } from '../src/catalog/catalog.ts';
import { CHAINS } from '../src/config/chains.ts';
import { dataFolder } from '../src/config/data-folder.ts';
import { byMonth, tableDir, writeLayoutFile } from '../src/lake/layout.ts';
import { openLakeDb, reportViews, writeViewsFile } from '../src/reports/views.ts';
import { type SandboxProcess, startSandbox } from '../src/sandbox/spawn.ts';
import { lit, qt } from '../src/util/sql.ts';
import { median, must } from './util.ts';

/** What the suite lends this section. */
export interface LakeBenchContext {
  readonly quick: boolean;
  readonly work: string;
  readonly log: (s: string) => void;
  readonly exportRun: (
    url: string,
    apiKey: string,
    dataDir: string,
    args: string[],
  ) => Promise<{ secs: number; code: number | null; out: string; lakeMs: number }>;
  readonly timed: (args: string[], env: NodeJS.ProcessEnv) => Promise<{ secs: number; peakMb: number }>;
  readonly line: (l: {
    what: string;
    rows: number | '';
    secs: string;
    rate: string;
    ratio: string;
    note: string;
  }) => void;
  readonly target: (t: { n: number; what: string; want: string; got: string; met: boolean; sized?: boolean }) => void;
}

const NOW = '2026-01-01T00:00:00Z';

/** Parquet files under a folder. */
export function parquetFiles(dir: string): number {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.parquet')).length;
}

/** Seconds to bind the lake's views in a new DuckDB and fetch every row of one report. */
async function reportSecs(dataDir: string, name: string): Promise<number> {
  const t = performance.now();
  const db = await openLakeDb(dataDir);
  try {
    await db.conn.runAndReadAll(`SELECT * FROM reports.${name}`);
  } finally {
    db.close();
  }
  return (performance.now() - t) / 1000;
}

/** The median seconds of every report on a lake, by report. */
export async function reportTimes(dataDir: string, runs = 3): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const v of reportViews()) {
    const xs: number[] = [];
    for (let i = 0; i < runs; i++) xs.push(await reportSecs(dataDir, v.name));
    out.set(v.name, median(xs));
  }
  return out;
}

/**
 * A copy of a lake with one file per table, in the layout the readers expect (partition values `all`), written from
 * the lake's own views: what DuckDB does over well-shaped Parquet.
 */
export async function compactedCopy(dataDir: string, copyDir: string): Promise<void> {
  const db = await openLakeDb(dataDir);
  const lake = dataFolder(copyDir).lake;
  try {
    for (const ds of DATASETS)
      for (const part of ds.kind === 'mutable' ? (['data', 'history'] as const) : (['data'] as const)) {
        const months = byMonth(ds, part);
        const file = join(tableDir(lake, ds, part), 'chain=all', ...(months ? ['month=all'] : []), 'data.parquet');
        mkdirSync(dirname(file), { recursive: true });
        const view = part === 'history' ? `${ds.table}_history` : ds.table;
        await db.conn.run(
          `COPY (SELECT * EXCLUDE (chain${months ? ', month' : ''}) FROM ${qt(view)}) TO ${lit(file)} (FORMAT parquet, COMPRESSION zstd)`,
        );
      }
    writeLayoutFile(lake);
  } finally {
    db.close();
  }
  // Its views file too, so that its readers open views the way the lake's do.
  await writeViewsFile(copyDir);
}

/** `pool-export run` of every job on some chains into one data folder; stops the suite if it fails. */
function runner(cx: LakeBenchContext, sb: SandboxProcess, dir: string, chains: string[]) {
  return async (what: string) => {
    const r = await cx.exportRun(sb.url, sb.apiKey, dir, ['--chains', chains.join(',')]);
    must(r, what);
    return r;
  };
}

export async function lakeBench(cx: LakeBenchContext): Promise<void> {
  const names = cx.quick ? ['bsc', 'polygon'] : Object.keys(CHAINS);
  const ids = names.map((n) => CHAINS[n]!);
  const scale = cx.quick ? '1000' : '5000';
  cx.log(
    `lake: a lake of ${names.length} chains at scale ${scale} (the demo's is 8 chains at 5000): its readers and runs`,
  );
  const sb = await startSandbox(['--scale', scale, '--chains', ids.join(','), '--now', NOW]);
  const dir = join(cx.work, 'lake-demo');
  const run = runner(cx, sb, dir, names);
  try {
    await run('first run');
    // 10: an incremental run after 100 new blocks, then a run with nothing new.
    await sb.control('advance', { blocks: 100 });
    const inc = await run('incremental run');
    const noop = await run('no-op run');
    const lakeShare = inc.lakeMs / 1000 / inc.secs;
    cx.line({
      what: `incremental run after 100 blocks, ${names.length} chains`,
      rows: '',
      secs: inc.secs.toFixed(1),
      rate: '',
      ratio: `lake write ${(lakeShare * 100).toFixed(0)}%; ${(inc.secs / noop.secs).toFixed(2)} × no-op`,
      note: `lake write ${(inc.lakeMs / 1000).toFixed(1)} s; no-op run ${noop.secs.toFixed(1)} s (lake write ${(noop.lakeMs / 1000).toFixed(1)} s)`,
    });
    cx.target({
      n: 10,
      what: 'lake: incremental run after 100 new blocks, every job',
      want: 'lake write ≤ 25% of the run; run ≤ 2 × a no-op run',
      got: `${(lakeShare * 100).toFixed(0)}%; ${(inc.secs / noop.secs).toFixed(2)} ×`,
      met: lakeShare <= 0.25 && inc.secs <= 2 * noop.secs,
    });

    // 7: opening the lake, against the CLI's own start.
    const env = { ...process.env, POOL_EXPORT_DATA_DIR: dir };
    const secsOf = async (args: string[]) => {
      await cx.timed(args, env);
      const xs: number[] = [];
      for (let i = 0; i < 5; i++) xs.push((await cx.timed(args, env)).secs);
      return median(xs);
    };
    const version = await secsOf(['--version']);
    const select1 = await secsOf(['query', 'SELECT 1']);
    const files = parquetFiles(join(dir, 'lake'));
    cx.line({
      what: `query "SELECT 1" on the lake (${files} files)`,
      rows: '',
      secs: select1.toFixed(2),
      rate: '',
      ratio: `+${(select1 - version).toFixed(2)} s over --version`,
      note: `--version ${version.toFixed(2)} s`,
    });
    cx.target({
      n: 7,
      what: 'lake: query "SELECT 1" over the demo-sized lake',
      want: '≤ 0.3 s above --version',
      got: `+${(select1 - version).toFixed(2)} s`,
      met: select1 - version <= 0.3,
    });

    // 8: every report, against the same over one file per table.
    const ref = join(cx.work, 'lake-compacted');
    await compactedCopy(dir, ref);
    const lakeTimes = await reportTimes(dir);
    const refTimes = await reportTimes(ref);
    let worst = { name: '', ratio: 0 };
    for (const [name, secs] of lakeTimes) {
      const ratio = secs / refTimes.get(name)!;
      if (ratio > worst.ratio) worst = { name, ratio };
      cx.line({
        what: `report ${name}`,
        rows: '',
        secs: secs.toFixed(2),
        rate: '',
        ratio: `${ratio.toFixed(1)} × compacted`,
        note: `one file per table: ${refTimes.get(name)!.toFixed(2)} s`,
      });
    }
    cx.target({
      n: 8,
      what: 'lake: every report over the lake, against one file per table',
      want: '≤ 2 × for each',
      got: `worst ${worst.ratio.toFixed(1)} × (${worst.name})`,
      met: worst.ratio <= 2,
    });
  } finally {
    await sb.stop();
  }
  await manyRuns(cx);
}

/** 9: scheduled-style runs on one chain, then the file count and the reports' time again. */
async function manyRuns(cx: LakeBenchContext): Promise<void> {
  const runs = cx.quick ? 10 : 100;
  cx.log(`lake: ${runs} scheduled-style runs on bsc`);
  const sb = await startSandbox(['--scale', '1000', '--chains', '56', '--now', NOW]);
  const dir = join(cx.work, 'lake-runs');
  const run = runner(cx, sb, dir, ['bsc']);
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  try {
    await run('first run');
    // The reports' time on the lake, and on a copy of it with one file per table: data that grows with the runs (a
    // snapshot of the list per run) makes both slower; the lake's shape, only the first.
    const measure = async (label: string) => {
      const ref = join(cx.work, `lake-runs-compacted-${label}`);
      await compactedCopy(dir, ref);
      return {
        files: parquetFiles(join(dir, 'lake')),
        secs: sum(await reportTimes(dir)),
        ref: sum(await reportTimes(ref)),
      };
    };
    const before = await measure('before');
    const t = performance.now();
    for (let i = 0; i < runs; i++) {
      await sb.control('advance', { blocks: 100 });
      await run(`scheduled run ${i + 1}`);
    }
    const runSecs = (performance.now() - t) / 1000 / runs;
    const after = await measure('after');
    const growth = {
      files: after.files / before.files - 1,
      secs: after.secs / before.secs - 1,
      shape: after.secs / after.ref / (before.secs / before.ref) - 1,
    };
    const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)}%`;
    cx.line({
      what: `${runs} runs of 100 new blocks each, bsc`,
      rows: '',
      secs: runSecs.toFixed(1),
      rate: '',
      ratio: `files ${pct(growth.files)}, reports against one file per table ${pct(growth.shape)}`,
      note: `seconds per run; files ${before.files} → ${after.files}; every report, summed: ${before.secs.toFixed(1)} s → ${after.secs.toFixed(1)} s (${pct(growth.secs)}), over one file per table ${before.ref.toFixed(1)} s → ${after.ref.toFixed(1)} s`,
    });
    cx.target({
      n: 9,
      what: `lake: after ${runs} scheduled-style runs`,
      want: 'files, and the reports against one file per table (target 8), grow ≤ 10%',
      got: `files ${pct(growth.files)}, reports ${pct(growth.shape)}`,
      met: growth.files <= 0.1 && growth.shape <= 0.1,
      sized: true,
    });
  } finally {
    await sb.stop();
  }
}
