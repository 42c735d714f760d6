/**
 * The suite's sections about what a run costs the host: the memory allowance, the memory of two sizes, the start-up of
 * the CLI, the no-op run, the base-compare of two checkouts and a bucket upload (bench/bench.ts).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pageQuery } from '../src/export/queries.ts';
import { startSandbox } from '../src/sandbox/spawn.ts';
import { CHAIN, SWAPS } from './ceiling.ts';
import {
  BURST,
  exportRun,
  fmt,
  gql,
  HERE,
  head,
  lines,
  log,
  MEM_HIGH,
  MEM_LOW,
  measured,
  processOwn,
  QUICK,
  type Row,
  scriptRows,
  target,
  timed,
  work,
} from './suite.ts';
import { median, must } from './util.ts';

export async function allowance(): Promise<void> {
  const scale = QUICK ? 8_000 : 30_000;
  log(`allowance: latency 100 ms, rate limit 20/s, scale ${fmt(scale)}`);
  const sb = await startSandbox([
    '--scale',
    String(scale),
    '--burst',
    '200',
    '--chains',
    String(CHAIN),
    '--latency-ms',
    '100',
    '--rate-limit',
    '20',
  ]);
  try {
    const at = await head(sb);
    // The sequential pager: one request after the other, for 10 seconds.
    const q = pageQuery(SWAPS, 'swaps', 'seq-next');
    let n = 0;
    let last: Row = { id: '', timestamp: '0' };
    const t = performance.now();
    while (performance.now() - t < (QUICK ? 5_000 : 10_000)) {
      const page = (
        await gql<{ rows: Row[] }>(sb, q, { first: 100, block: at.number, seq: String(last.timestamp), id: last.id })
      ).rows;
      n++;
      if (page.length) last = page[page.length - 1]!;
    }
    const seqRps = n / ((performance.now() - t) / 1000);
    await sb.control('stats', {});
    const r = await exportRun(sb.url, sb.apiKey, join(work, 'allowance'), ['--jobs', 'events,state'], {
      pageSize: 100,
    });
    must(r, 'pool-export run (allowance)');
    const stats = await sb.control<{ byStatus: Record<string, number>; rateLimited: number }>('stats');
    const ok = stats.byStatus['200'] ?? 0;
    const limited = stats.byStatus['429'] ?? 0;
    const rps = ok / r.taskSecs;
    const S = 'upstream allowance: `--latency-ms 100 --rate-limit 20`, limit not configured';
    lines.push(
      {
        section: S,
        what: 'sequential keyset pager',
        rows: '',
        secs: '',
        rate: `${seqRps.toFixed(1)} req/s`,
        ratio: `${((seqRps / 20) * 100).toFixed(0)}% of 20/s`,
        note: '',
      },
      {
        section: S,
        what: 'pool-export run, jobs events + state (task phase)',
        rows: r.taskRows,
        secs: r.taskSecs.toFixed(1),
        rate: `${rps.toFixed(1)} req/s`,
        ratio: `${((rps / 20) * 100).toFixed(0)}% of 20/s`,
        note: `goal: ≥ 90% of the allowance; ${ok} answered, ${limited} HTTP 429 (${((limited / (ok + limited)) * 100).toFixed(1)}%)`,
      },
    );
  } finally {
    await sb.stop();
  }
}

export async function memory(): Promise<void> {
  const peaks: number[] = [];
  for (const scale of [MEM_LOW, MEM_HIGH]) {
    log(`memory: backfill of ${fmt(scale)} swaps`);
    const sb = await startSandbox(['--scale', String(scale), '--burst', String(BURST), '--chains', String(CHAIN)]);
    try {
      const r = await exportRun(sb.url, sb.apiKey, join(work, `mem-${scale}`), ['--datasets', 'dodoex.swaps']);
      must(r, `pool-export run (${scale})`);
      peaks.push(r.peakMb);
      const S = 'memory: first backfill of one dataset, default settings (peak RSS of the exporter process)';
      const large = peaks.length === 2;
      const growth = large ? peaks[1]! / peaks[0]! : 1;
      lines.push({
        section: S,
        what: `pool-export run, ${fmt(scale + BURST)} swaps`,
        rows: r.taskRows,
        secs: r.secs.toFixed(1),
        rate: fmt(r.taskRows / r.taskSecs),
        ratio: large ? `${growth.toFixed(2)} × the smaller run` : '1.00',
        note: `peak RSS ${fmt(r.peakMb)} MB${large ? '; targets 3: ≤ 350 MB and ≤ 1.2 ×; 5: ≤ 300 s' : ''}`,
      });
      if (large) {
        const rows = fmt(scale + BURST);
        const small = fmt(MEM_LOW + BURST);
        const within = r.peakMb <= 350 && growth <= 1.2;
        const tiny = await processOwn();
        const got = `${fmt(r.peakMb)} MB, ${growth.toFixed(2)} × the ${small}-row run`;
        target({
          n: 3,
          what: `peak RSS, ${rows} swaps, default settings`,
          want: '≤ 350 MB and ≤ 1.2 × (at 5,000,000 rows)',
          got,
          met: within,
          sized: true,
          room: `${fmt(tiny.peakMb)} MB is the process's own: a run of ${fmt(tiny.taskRows)} swaps peaked there`,
        });
        target({
          n: 5,
          what: `first backfill of ${rows} swaps, whole process`,
          want: '≤ 300 s (at 5,000,000 rows)',
          got: `${r.secs.toFixed(0)} s`,
          met: r.secs <= 300,
          sized: true,
        });
      }
    } finally {
      await sb.stop();
      rmSync(join(work, `mem-${scale}`), { recursive: true, force: true });
    }
  }
}

export async function startup(): Promise<void> {
  log('start-up: --version and status on an empty folder, 9 runs each');
  const empty = join(work, 'empty');
  mkdirSync(empty, { recursive: true });
  const env = { ...process.env, POOL_EXPORT_DATA_DIR: empty };
  for (const [what, args] of [
    ['pool-export --version', ['--version']],
    ['pool-export status, empty folder', ['status']],
  ] as const) {
    await timed([...args], env);
    const runs: { secs: number; peakMb: number }[] = [];
    for (let i = 0; i < 9; i++) runs.push(await timed([...args], env));
    const secs = median(runs.map((r) => r.secs));
    const peak = median(runs.map((r) => r.peakMb));
    if (args[0] === 'status') measured.startupSecs = secs;
    lines.push({
      section: 'start-up of the compiled CLI (median of 9 runs)',
      what,
      rows: '',
      secs: secs.toFixed(3),
      rate: '',
      ratio: '',
      note: `peak RSS ${fmt(peak, 1)} MB; target 4: ≤ 0.3 s and ≤ 90 MB`,
    });
    target({
      n: 4,
      what,
      want: '≤ 0.3 s and ≤ 90 MB',
      got: `${secs.toFixed(3)} s, ${fmt(peak, 1)} MB`,
      met: secs <= 0.3 && peak <= 90,
    });
  }
}

/**
 * What a run costs by what is new, on the demo's 8 chains at its scale (32 routes: the dodoex, token and mine
 * deployments and the list of each; the quick suite: bsc and polygon, 8 routes): a no-op run, then a run after 100 new blocks made twice on copies of one data folder, batched (one
 * request per route for what is new) and with `batchDatasets: 0` (a first request per task, as every run read before),
 * the baseline of the same run. Then, in the full suite, `bench/follow-lag.ts` for 5 minutes: the lag `schedule
 * --every 10s` keeps against a block a second. `make bench-noop` measures the same, with the requests a day.
 */
export async function noop(): Promise<void> {
  // The scale in the full suite: every job on the demo's 8 chains and scale (32 routes), as `make bench-noop`;
  // two chains at a smaller scale in the quick one.
  const chains = QUICK
    ? ['bsc', 'polygon']
    : ['ethereum', 'bsc', 'polygon', 'arbitrum', 'moonriver', 'aurora', 'avax', 'optimism'];
  log(`no-op: every job on ${chains.length} chains; then 100 new blocks, batched and not`);
  const sb = await startSandbox(
    QUICK ? ['--scale', '2000', '--chains', '56,137'] : ['--scale', '5000', '--now', '2026-11-20T00:00:00Z'],
  );
  const routes = chains.length * 4;
  const args = ['--chains', chains.join(',')];
  try {
    const dir = join(work, 'noop');
    must(await exportRun(sb.url, sb.apiKey, dir, args), 'first run');
    const counted = async (data: string, config: Record<string, unknown> = {}) => {
      await sb.control('stats', {});
      const r = await exportRun(sb.url, sb.apiKey, data, args, config);
      must(r, 'run');
      return { ...r, requests: (await sb.control<{ requests: number }>('stats')).requests };
    };
    const idle = await counted(dir);
    await sb.control('advance', { blocks: 100 });
    const alone = join(work, 'noop-unbatched');
    cpSync(dir, alone, { recursive: true });
    const batched = await counted(dir);
    const unbatched = await counted(alone, { batchDatasets: 0 });
    const row = (what: string, r: typeof idle) =>
      lines.push({
        section: `runs priced by what is new: every job on ${chains.length} chains (${routes} routes)`,
        what,
        rows: r.taskRows,
        secs: r.secs.toFixed(1),
        rate: `${r.requests} requests`,
        ratio: `${(r.requests / routes).toFixed(2)} per route`,
        note: `lake write ${(r.lakeMs / 1000).toFixed(1)} s, ${r.lakeFiles} files`,
      });
    row('nothing new upstream', idle);
    row('after 100 new blocks, one batch per route', batched);
    row('after 100 new blocks, a first request per task (baseline)', unbatched);
    // Before runs were priced by what is new, a run with nothing new read every task as a run after new blocks does
    // with a first request per task: the unbatched run is that run's cost, measured here on the same data.
    target({
      n: 11,
      what: 'no-op run: requests per route (head probe and list included); wall time against a run that reads every task',
      want: '≤ 2; ≤ 1/8',
      got: `${(idle.requests / routes).toFixed(2)} (${idle.requests} requests); ${idle.secs.toFixed(1)} s against ${unbatched.secs.toFixed(1)} s: 1/${(unbatched.secs / idle.secs).toFixed(1)}`,
      met: idle.requests <= 2 * routes && idle.secs * 8 <= unbatched.secs,
    });
    target({
      n: 12,
      what: 'run after 100 new blocks: requests per route; wall time against a no-op run',
      want: '≤ 3 per route; ≤ 3.5 ×',
      got: `${(batched.requests / routes).toFixed(2)} (unbatched ${(unbatched.requests / routes).toFixed(2)}); ${(batched.secs / idle.secs).toFixed(2)} × (unbatched ${(unbatched.secs / idle.secs).toFixed(2)} ×)`,
      met: batched.requests <= 3 * routes && batched.secs <= 3.5 * idle.secs,
    });
    target({
      n: 14,
      what: 'no-op run: lake files written (an unchanged liquidity list stores no new snapshot)',
      want: '0',
      got: `${idle.lakeFiles} (after 100 new blocks: ${batched.lakeFiles})`,
      met: idle.lakeFiles === 0,
    });
    if (QUICK) return;
    log('no-op: schedule --every 10s against a block a second, 5 minutes');
    const follow = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(HERE, 'follow-lag.ts'), '--minutes', '5', '--local'],
      {
        encoding: 'utf8',
      },
    );
    const lag = /p95 (\d+(?:\.\d+)?) s/.exec(follow.stdout);
    const hourly = /requests an hour: (\d+) .*?: (\d+) \(/.exec(follow.stdout);
    target({
      n: 13,
      what: 'schedule --every 10s, a block a second: lag of dodoex.swaps at p95; requests an hour against the 5-minute schedule',
      want: 'p95 < 30 s',
      got:
        lag && hourly
          ? `p95 ${lag[1]} s; ${hourly[1]} requests an hour (5-minute schedule: ${hourly[2]})`
          : `failed: ${follow.stderr.slice(-300)}`,
      met: lag !== null && Number(lag[1]) < 30,
    });
  } finally {
    await sb.stop();
  }
}

/**
 * A DODO-only run against the last commit before subgraphs of any schema (`bench/base-compare.ts`, full suite only):
 * paired no-op runs and runs after 100 new blocks on the demo's data, each pair on copies of one folder.
 */
export async function base(): Promise<void> {
  if (QUICK) return;
  log('base: DODO-only runs against the commit before subgraphs of any schema, 5 pairs each');
  const { r, rows } = scriptRows(
    ['base-compare.ts', '--pairs', '5'],
    /^\| (nothing new upstream|after 100 new blocks) \| (\S+) \| (\S+) \| ([\d.]+) s \| ([\d.]+) s \| ([\d.]+) \(([^)]*)\) \|$/,
  );
  for (const m of rows)
    lines.push({
      section: 'any subgraph: a DODO-only run against the commit before it',
      what: m[1]!,
      rows: '',
      secs: m[5]!,
      rate: `${m[3]} requests (before: ${m[2]})`,
      ratio: `${m[6]} × the time before`,
      note: `before ${m[4]} s; pairs ${m[7]}`,
    });
  const same = rows.length === 2 && rows.every((m) => m[2] === m[3]);
  target({
    n: 15,
    what: 'a DODO-only run (no-op; after 100 blocks) against the commit before subgraphs of any schema: requests; wall time',
    want: 'as many; ≤ 1.05 ×',
    got: rows.length
      ? rows.map((m) => `${m[1]}: ${m[3]} requests (before ${m[2]}), ${m[6]} ×`).join('; ')
      : `failed: ${r.stderr.slice(-300)}`,
    met: same && rows.every((m) => Number(m[6]) <= 1.05),
  });
}

/**
 * What an incremental run uploads to a bucket lake (`bench/bucket-upload.ts`, full suite only): one month of 400,000
 * swaps on one chain, three runs after 100 new blocks; the bytes uploaded against the Parquet bytes of the new rows,
 * and against the whole month, which a lake of one object per month uploaded for the same run (the baseline).
 */
export async function upload(): Promise<void> {
  if (QUICK) return;
  log('upload: incremental runs to a bucket lake, one month of 400,000 swaps');
  const MB = '([\\d.]+) MB';
  const { r, rows } = scriptRows(
    ['bucket-upload.ts'],
    new RegExp(
      `^\\| (after 100 new blocks \\(\\d\\)) \\| (\\d+) objects, ${MB} \\| ${MB} \\| (\\d+) files, ${MB} \\| ([\\d.]+) × \\| ([\\d.]+) × \\|$`,
    ),
  );
  for (const m of rows)
    lines.push({
      section: 'runs priced by what is new: uploads of a bucket lake',
      what: m[1]!,
      rows: '',
      secs: '',
      rate: `${m[2]} objects, ${m[3]} MB (new rows ${m[4]} MB)`,
      ratio: `${m[7]} × the new rows`,
      note: `one object per month: ${m[6]} MB, ${m[8]} ×`,
    });
  target({
    n: 16,
    what: 'incremental run to a bucket lake (one month of 400,000 swaps, 100 new blocks): bytes uploaded, manifests apart',
    want: '≤ 2 × its new rows',
    got: rows.length
      ? rows
          .map((m) => `${m[3]} MB for ${m[4]} MB of new rows (${m[7]} ×; one object per month: ${m[6]} MB)`)
          .join('; ')
      : `failed: ${r.stderr.slice(-300)}`,
    met: rows.length > 0 && rows.every((m) => Number(m[7]) <= 2),
  });
}
