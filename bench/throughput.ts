import { rmSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { DEFAULTS } from '../src/config/config.ts';
import { startSandbox } from '../src/sandbox/spawn.ts';
import { CHAIN } from './ceiling.ts';
import {
  checksAlone,
  duckdbIngest,
  nativeIngest,
  Recorder,
  replayStats,
  splitPages,
  startReplay,
  storeAlone,
} from './ingest.ts';
import { autoPagination, floor, skipPager } from './pagers.ts';
import {
  BURST,
  exportRun,
  fmt,
  head,
  lines,
  log,
  measured,
  processOwn,
  SMALL,
  target,
  withBusy,
  work,
} from './suite.ts';
import { must } from './util.ts';

export async function throughput(): Promise<void> {
  log(`throughput at ${fmt(SMALL)} swaps`);
  const sb = await startSandbox(['--scale', String(SMALL), '--burst', String(BURST), '--chains', String(CHAIN)]);
  try {
    const at = await head(sb);
    const a = await skipPager(sb, at.number);
    const b = await withBusy(
      sb,
      () =>
        autoPagination(
          sb,
          at.number,
          'id timestamp pair { id } sender from to fromToken { id } toToken { id } logIndex amountIn amountOut feeBase feeQuote baseVolume quoteVolume volumeUSD updatedAt hash',
        ),
      (r) => r.secs,
    );
    const c0 = await withBusy(
      sb,
      () => floor(sb, at, 4),
      (r) => r.secs,
    );
    const total = c0.rows;
    // The same pages once more through the recorder (untimed): they are replayed for the floor, and their rows are
    // the ceiling's input.
    const rec = new Recorder(sb.url);
    const proxy = await rec.listen();
    const ndjson = join(work, 'swaps.ndjson');
    await floor({ ...sb, url: proxy }, at, 4, ndjson);
    const d = await duckdbIngest(ndjson);
    const e = await nativeIngest(ndjson);
    // DuckDB alone storing the rows: a transaction per page, per batch of the default size, and one for all, with the
    // default memory limit; and a transaction per page with the least limit DuckDB stored them in (on 2 cores; its
    // JSON reader takes 32 MiB per thread).
    const pages = splitPages(ndjson, join(work, 'alone-pages'));
    const alone = [];
    for (const per of new Set([1, DEFAULTS.batchRows / 1000, pages.length]))
      alone.push({ per, limit: 'default', ...(await storeAlone(pages, per)) });
    alone.push({ per: 1, limit: '96MB', ...(await storeAlone(pages, 1, '96MB')) });
    rmSync(join(work, 'alone-pages'), { recursive: true });
    rmSync(ndjson);
    const live = await withBusy(
      sb,
      () => exportRun(proxy, sb.apiKey, join(work, 'live'), ['--datasets', 'dodoex.swaps']),
      (r) => r.taskSecs,
    );
    must(live, 'pool-export run (live)');
    const tiny = await processOwn();
    await rec.close();
    const checks = await checksAlone(rec.pages);
    const replayer = await startReplay(rec.pages);
    let c: Awaited<ReturnType<typeof floor>>;
    let serverCpu = 0;
    let replay: Awaited<ReturnType<typeof exportRun>>;
    try {
      const served0 = await replayStats(replayer.url);
      c = await floor({ ...sb, url: replayer.url }, at, 4);
      serverCpu = ((await replayStats(replayer.url)).cpuMs - served0.cpuMs) / 1000;
      replay = await exportRun(replayer.url, sb.apiKey, join(work, 'replay'), ['--datasets', 'dodoex.swaps']);
      must(replay, 'pool-export run (replay)');
    } finally {
      replayer.stop();
    }
    const rate = (rows: number, secs: number) => rows / secs;
    const { checkpoint: k, lake: l } = d.after;
    const cores = cpus().length;
    // The work a run cannot skip, each part measured alone in this run, as processor time: fetching and parsing the
    // pages (client and replay server), checking every value, inserting the rows; for the whole process also folding
    // them into the file and writing the lake. Spread perfectly over the cores, it still takes its sum ÷ cores.
    // The recorded pages are the floor's and the live run's (which can differ at the shards' edges): the checks count
    // for as many rows as the floor fetched.
    const taskWork = c.cpu + serverCpu + checks.cpu * (total / checks.rows) + d.cpu;
    const wholeWork = taskWork + k.cpu + l.cpu;
    const taskBound = Math.max(c.secs, taskWork / cores);
    const cRate = rate(c.rows, c.secs);
    const dRate = rate(d.rows, d.secs);
    const S = `backfill of ${fmt(total)} swaps (1 dataset, 1 chain), no latency`;
    lines.push(
      {
        section: S,
        what: '(a) sequential `skip` pager',
        rows: a.rows,
        secs: a.secs.toFixed(2),
        rate: fmt(rate(a.rows, a.secs)),
        ratio: `${((a.rows / total) * 100).toFixed(1)}% of rows`,
        note: `stops: ${a.stop}`,
      },
      {
        section: S,
        what: '(b) auto-pagination strategy (skip-split + id_gt)',
        rows: b.rows,
        secs: b.secs.toFixed(2),
        rate: fmt(rate(b.rows, b.secs)),
        ratio: `${(rate(b.rows, b.secs) / cRate).toFixed(2)} × floor`,
        note: `${b.requests} requests of 5 × 1000; ${b.busy}`,
      },
      {
        section: S,
        what: '(c0) same pages from the sandbox, fetch + parse only, 4 at once',
        rows: c0.rows,
        secs: c0.secs.toFixed(2),
        rate: fmt(rate(c0.rows, c0.secs)),
        ratio: `${(rate(c0.rows, c0.secs) / cRate).toFixed(2)} × floor`,
        note: `${c0.requests} requests; ${c0.busy}: the sandbox, not the client, sets this pace`,
      },
      {
        section: S,
        what: '(c) floor: same pages replayed by a plain HTTP server (own process), fetch + parse only, 4 at once',
        rows: c.rows,
        secs: c.secs.toFixed(2),
        rate: fmt(cRate),
        ratio: '1.00 × floor',
        note: `${c.requests} requests; processor time ${c.cpu.toFixed(2)} s in the client, ${serverCpu.toFixed(2)} s in the server`,
      },
      {
        section: S,
        what: "(c2) the exporter's checks of every value, alone, on the same pages",
        rows: checks.rows,
        secs: checks.secs.toFixed(2),
        rate: fmt(rate(checks.rows, checks.secs)),
        ratio: '',
        note: `\`checkPage\` on each page, parsed beforehand; ${checks.cpu.toFixed(2)} s of processor time`,
      },
      {
        section: S,
        what: '(d) ceiling: DuckDB `read_json` ingest of the same rows',
        rows: d.rows,
        secs: d.secs.toFixed(2),
        rate: fmt(dRate),
        ratio: '1.00 × ceiling',
        note: `one INSERT … SELECT, same table and casts; ${d.cpu.toFixed(2)} s of processor time`,
      },
      {
        section: S,
        what: "(d1) the ceiling's rows folded into the database file",
        rows: d.rows,
        secs: k.secs.toFixed(2),
        rate: '',
        ratio: '',
        note: `CHECKPOINT after the ceiling's INSERT; ${k.cpu.toFixed(2)} s of processor time`,
      },
      {
        section: S,
        what: "(d2) the ceiling's rows written to the Parquet lake",
        rows: d.rows,
        secs: l.secs.toFixed(2),
        rate: '',
        ratio: '',
        note: `the lake writer's write of every row; ${l.cpu.toFixed(2)} s of processor time`,
      },
      {
        section: S,
        what: '(e) DuckDB `read_json` with its own inferred types, no casts',
        rows: e.rows,
        secs: e.secs.toFixed(2),
        rate: fmt(rate(e.rows, e.secs)),
        ratio: `${(dRate / rate(e.rows, e.secs)).toFixed(2)} (ceiling ÷ this)`,
        note: 'CREATE TABLE … AS SELECT * FROM read_json(…)',
      },
      ...alone.map((a) => ({
        section: S,
        what: `(g) DuckDB alone storing the rows, ${a.per === 1 ? 'a transaction per page of 1,000' : `${fmt(a.per * 1000)} rows to a transaction`}, memory limit ${a.limit === 'default' ? DEFAULTS.duckdbMemoryLimit : a.limit}`,
        rows: 'error' in a ? '' : a.rows,
        secs: '',
        rate: '',
        ratio: '',
        note:
          'error' in a
            ? `failed: ${a.error}`
            : `peak RSS ${fmt(a.peakMb)} MB, ${fmt(a.startMb)} MB with the warehouse open: a process of its own (\`bench/store-alone.ts\`), then a checkpoint`,
      })),
      {
        section: S,
        what: 'pool-export run, live (whole process)',
        rows: live.taskRows,
        secs: live.secs.toFixed(2),
        rate: fmt(rate(live.taskRows, live.secs)),
        ratio: `${(rate(live.taskRows, live.secs) / cRate).toFixed(2)} × floor`,
        note: `peak RSS ${fmt(live.peakMb)} MB; includes start-up and lake write`,
      },
      {
        section: S,
        what: 'pool-export run, live (task phase, from the ledger)',
        rows: live.taskRows,
        secs: live.taskSecs.toFixed(2),
        rate: fmt(rate(live.taskRows, live.taskSecs)),
        ratio: `${(rate(live.taskRows, live.taskSecs) / cRate).toFixed(2)} × floor`,
        note: live.busy,
      },
      {
        section: S,
        what: 'pool-export run, replayed pages, no latency (task phase)',
        rows: replay.taskRows,
        secs: replay.taskSecs.toFixed(2),
        rate: fmt(rate(replay.taskRows, replay.taskSecs)),
        ratio: `${(rate(replay.taskRows, replay.taskSecs) / dRate).toFixed(2)} × ceiling`,
        note: 'target 1: ≥ 0.70 × ceiling',
      },
    );
    const eRate = rate(e.rows, e.secs);
    const replayed = rate(replay.taskRows, replay.taskSecs) / dRate;
    target({
      n: 1,
      what: `replayed pages, task phase, ${fmt(total)} swaps`,
      want: '≥ 0.70 × ceiling',
      got: `${replayed.toFixed(2)} × ceiling`,
      met: replayed >= 0.7,
      room: `${(d.secs / taskBound).toFixed(2)} × ceiling: fetch and parse (the floor), the checks and the INSERT, measured apart, use ${taskWork.toFixed(2)} s of processor time (${(taskWork / cores).toFixed(2)} s on ${cores} cores; the floor alone took ${c.secs.toFixed(2)} s), before any checkpoint`,
    });
    target({
      n: 1,
      what: 'the ceiling against native `read_json` (inferred types)',
      want: '≥ 0.50 × native',
      got: `${(dRate / eRate).toFixed(2)} × native`,
      met: dRate / eRate >= 0.5,
    });
    const whole = rate(live.taskRows, live.secs) / cRate;
    target({
      n: 2,
      what: `live, whole process, ${fmt(total)} swaps`,
      want: '≥ 0.60 × floor',
      got: `${whole.toFixed(2)} × floor`,
      met: whole >= 0.6,
      ...(measured.startupSecs === undefined
        ? {}
        : {
            room: `${(c.secs / (measured.startupSecs + Math.max(c.secs, wholeWork / cores))).toFixed(2)} × floor: the start-up of \`status\` (${measured.startupSecs.toFixed(2)} s), then fetch and parse, checks, INSERT, checkpoint and lake write, measured apart: ${wholeWork.toFixed(2)} s of processor time (${(wholeWork / cores).toFixed(2)} s on ${cores} cores), with no upstream sharing the cores`,
          }),
    });
    target({
      n: 3,
      what: `peak RSS of the live run of ${fmt(total)} swaps, default settings`,
      want: '≤ 200 MB (at 100,000 rows)',
      got: `${fmt(live.peakMb)} MB`,
      met: live.peakMb <= 200,
      sized: true,
      room: `${fmt(Math.min(...alone.map((a) => ('error' in a ? Infinity : a.peakMb))))} MB: DuckDB alone storing the same rows in a process of its own peaked there at best (rows (g)); ${fmt(tiny.peakMb)} MB is the exporter's own: a run of ${fmt(tiny.taskRows)} swaps peaked there`,
    });
    target({
      n: 6,
      what: 'the floor measures the client alone',
      want: 'upstream busy ≤ 70%, or replayed pages',
      got: `replayed pages (from the sandbox, which was busy ${c0.busyPct.toFixed(0)}%)`,
      met: true,
    });
    if (live.taskRows !== total || replay.taskRows !== total || b.rows !== total || c.rows !== total)
      throw new Error(
        `row counts differ: live ${live.taskRows}, replay ${replay.taskRows}, auto-pagination ${b.rows}, floor ${c.rows} and ${total}`,
      );
  } finally {
    await sb.stop();
  }
}
