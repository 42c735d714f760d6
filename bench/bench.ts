/**
 * The benchmark suite: pool-export against the baselines a user would otherwise reach for, all measured in one run on
 * this machine, printed as one markdown table and written under `bench/results/`.
 *
 *   npx tsx bench/bench.ts           full: 100,000 and 5,000,000 rows, a demo-sized lake (about 20 minutes on 2 cores)
 *   npx tsx bench/bench.ts --quick   smoke: 20,000 and 100,000 rows, a 2-chain lake (about 4 minutes)
 *   … --only throughput,noop         only these sections (startup, throughput, allowance, memory, noop, base, upload,
 *                                    lake, pruned, reports)
 *
 * Benchmarks are not tests: nothing here fails on time. Each figure is a ratio against a baseline from the same run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import bundleOptions from '../scripts/bundle-options.json' with { type: 'json' };
import { DEFAULTS } from '../src/config/config.ts';
import { checkPage, mapPage } from '../src/export/mapper.ts';
import { pageQuery } from '../src/export/queries.ts';
import { writePending } from '../src/lake/lake-writer.ts';
import { BIN, type SandboxEndpoint, type SandboxProcess, startSandbox } from '../src/sandbox/spawn.ts';
import { Warehouse } from '../src/store/warehouse.ts';
import { lit, qt } from '../src/util/sql.ts';
import { query } from '../test/support/sandbox-client.ts';
import { CHAIN, ceilingInsert, SWAPS } from './ceiling.ts';
import { lakeBench } from './lake-bench.ts';
import { prunedBench } from './pruned-bench.ts';
import { reportOutputBench } from './report-output.ts';
import { median, must } from './util.ts';

/** This folder (bench/). */
const HERE = dirname(fileURLToPath(import.meta.url));

const QUICK = process.argv.includes('--quick');
const ONLY = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1]!.split(',') : undefined;
/** Rows of the throughput comparison, and of the two memory runs. */
const SMALL = QUICK ? 20_000 : 100_000;
const MEM_LOW = QUICK ? 20_000 : 500_000;
const MEM_HIGH = QUICK ? 100_000 : 5_000_000;
/** Swaps the sandbox packs into one block, on top of `--scale`. */
const BURST = 1100;
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'pool-export-bench-'));

type Row = Record<string, unknown> & { id: string };
interface Line {
  section: string;
  what: string;
  rows: number | string;
  secs: number | string;
  rate: string;
  ratio: string;
  note: string;
}
const lines: Line[] = [];

/** One target of the throughput-and-memory work, with what this run measured against it. */
interface Target {
  readonly n: number;
  readonly what: string;
  readonly want: string;
  readonly got: string;
  readonly met: boolean;
  /** The target is set at a size the quick run does not reach: its figure is shown, not judged. */
  readonly sized?: boolean;
  /** What this run's own baselines leave room for: the best figure a target's measurement could reach here. */
  readonly room?: string;
}
const targets: Target[] = [];
const target = (t: Target) => targets.push(t);
/** Median wall seconds of `pool-export status` on an empty folder, once the start-up section has run. */
let startupSecs: number | undefined;
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const log = (s: string) => process.stderr.write(`${s}\n`);

/** One GraphQL query of the sandbox's dodoex subgraph of the bench chain; returns its data. */
const gql = <T>(sb: SandboxEndpoint, q: string, variables: Record<string, unknown>) =>
  query(sb, CHAIN, 'dodoex', q, variables) as Promise<T>;

async function head(sb: SandboxProcess): Promise<{ number: number; timestamp: number }> {
  return (
    await gql<{ _meta: { block: { number: number; timestamp: number } } }>(
      sb,
      '{ _meta { block { number timestamp } } }',
      {},
    )
  )._meta.block;
}

/** (a) A hand-written script: `skip` pages in timestamp order, one after the other, until the upstream refuses. */
async function skipPager(sb: SandboxProcess, block: number): Promise<{ rows: number; secs: number; stop: string }> {
  const q = `query P($skip: Int!, $block: Int!) { swaps(first: 1000, skip: $skip, orderBy: timestamp, orderDirection: asc, block: { number: $block }) { id timestamp amountIn amountOut volumeUSD } }`;
  const t = performance.now();
  let rows = 0;
  for (let skip = 0; ; skip += 1000) {
    try {
      const page = (await gql<{ swaps: Row[] }>(sb, q, { skip, block })).swaps;
      rows += page.length;
      if (page.length < 1000) return { rows, secs: (performance.now() - t) / 1000, stop: 'end of data' };
    } catch (e) {
      return {
        rows,
        secs: (performance.now() - t) / 1000,
        stop: (e as Error).message.replace(/\s+/g, ' ').slice(0, 60),
      };
    }
  }
}

/**
 * (b) The strategy of `@graphprotocol/client-auto-pagination`: a large `first` is split into aliased sub-queries of
 * 1000 with growing `skip` up to the skip limit, then the next request continues after the last id (`id_gt`).
 */
async function autoPagination(
  sb: SandboxProcess,
  block: number,
  select: string,
): Promise<{ rows: number; secs: number; requests: number }> {
  const aliases = [0, 1000, 2000, 3000, 4000].map(
    (skip, i) =>
      `p${i}: swaps(first: 1000, skip: ${skip}, orderBy: id, orderDirection: asc, block: { number: $block }, where: { id_gt: $last }) { ${select} }`,
  );
  const q = `query P($last: ID!, $block: Int!) { ${aliases.join(' ')} }`;
  const t = performance.now();
  let rows = 0;
  let requests = 0;
  for (let last = ''; ; ) {
    const data = await gql<Record<string, Row[]>>(sb, q, { last, block });
    requests++;
    const all = Object.keys(data)
      .sort()
      .flatMap((k) => data[k]!);
    rows += all.length;
    if (all.length < 5000) return { rows, secs: (performance.now() - t) / 1000, requests };
    last = all[all.length - 1]!.id;
  }
}

/**
 * (c) The floor: the pages pool-export asks for (its own queries, four key-range shards at once), fetched and parsed
 * with no other work. With `record`, the mapped rows are also written as NDJSON, untimed, for (d).
 */
async function floor(
  sb: SandboxEndpoint,
  at: { number: number; timestamp: number },
  shards: number,
  record?: string,
): Promise<{ rows: number; secs: number; requests: number; cpu: number }> {
  const first = (
    await gql<{ rows: Row[] }>(sb, pageQuery(SWAPS, 'swaps', 'seq-first'), { first: 1, block: at.number, from: '0' })
  ).rows[0]!;
  const lo = Number(first.timestamp);
  const hi = at.timestamp + 1;
  const out = record ? createWriteStream(record) : undefined;
  let rows = 0;
  let requests = 0;
  const cpu0 = cpuSecs();
  const t = performance.now();
  await Promise.all(
    Array.from({ length: shards }, async (_, k) => {
      const to = String(lo + Math.floor(((k + 1) * (hi - lo)) / shards));
      let vars: Record<string, unknown> = {
        first: 1000,
        block: at.number,
        from: String(lo + Math.floor((k * (hi - lo)) / shards)),
        to,
      };
      let shape: 'range-first' | 'range-next' = 'range-first';
      for (;;) {
        const page = (await gql<{ rows: Row[] }>(sb, pageQuery(SWAPS, 'swaps', shape), vars)).rows;
        requests++;
        rows += page.length;
        if (out)
          out.write(
            mapPage(SWAPS, CHAIN, page)
              .rows.map((r) => JSON.stringify(r))
              .join('\n') + (page.length ? '\n' : ''),
          );
        if (page.length < 1000) return;
        const last = page[page.length - 1]!;
        shape = 'range-next';
        vars = { first: 1000, block: at.number, seq: String(last.timestamp), id: last.id, to };
      }
    }),
  );
  const secs = (performance.now() - t) / 1000;
  const cpu = cpuSecs() - cpu0;
  if (out) await new Promise((r) => out.end(r));
  return { rows, secs, requests, cpu };
}

/** Wall and processor seconds (the whole process: every thread, DuckDB's too) of one step. */
interface Cost {
  readonly secs: number;
  readonly cpu: number;
}

/** This process's processor time so far, user and system, every thread. */
function cpuSecs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Runs one step and measures it. */
async function cost(step: () => Promise<unknown>): Promise<Cost> {
  const [t, c] = [performance.now(), cpuSecs()];
  await step();
  return { secs: (performance.now() - t) / 1000, cpu: cpuSecs() - c };
}

/**
 * Times `sql` (which reads the rows file) on a fresh warehouse in `name`; `prepare` runs first, untimed, and the
 * steps of `after` follow it, each timed.
 */
async function timedIngest<Step extends string = never>(
  name: string,
  sql: {
    prepare?: (w: Warehouse) => Promise<void>;
    run: string;
    count: string;
    after?: Record<Step, (w: Warehouse) => Promise<unknown>>;
  },
): Promise<{ rows: number; secs: number; cpu: number; after: Record<Step, Cost> }> {
  const w = await Warehouse.open(join(work, name));
  try {
    await sql.prepare?.(w);
    const { secs, cpu } = await cost(() => w.exec(sql.run));
    const rows = Number((await w.all(`SELECT count(*) AS n FROM ${sql.count}`))[0]!.n);
    const after = {} as Record<Step, Cost>;
    for (const [step, run] of Object.entries(sql.after ?? {}) as [Step, (w: Warehouse) => Promise<unknown>][])
      after[step] = await cost(() => run(w));
    return { rows, secs, cpu, after };
  } finally {
    await w.close();
  }
}

/**
 * (d) The ceiling: DuckDB's own `read_json` ingest of the same rows into the same table, as one statement. Then, timed
 * apart, the rest of what a run does with those rows once they are in the table: the checkpoint that folds them into
 * the database file (`checkpoint`), and the lake write, the lake writer's write of every row (`lake`).
 */
function duckdbIngest(ndjson: string) {
  return timedIngest('ceiling', {
    prepare: (w) => w.ensureTables([SWAPS]),
    run: ceilingInsert([ndjson]),
    count: qt(SWAPS.table),
    after: {
      checkpoint: (w) => w.exec('CHECKPOINT'),
      lake: async (w) => {
        const root = join(work, 'ceiling-lake');
        await writePending(
          w,
          { ds: SWAPS, chainId: CHAIN, fromSeq: null, runs: [], rebuild: true, dropped: true },
          { root, lake: root },
        );
      },
    },
  });
}

let aloneScript: Promise<string> | undefined;
/**
 * `bench/store-alone.ts` compiled as the command line is (`scripts/bundle-options.json`, DuckDB's package external),
 * so that its process holds what the exporter's would, not tsx and its compiler.
 */
function storeAloneScript(): Promise<string> {
  const out = join(ROOT, 'dist/bench/store-alone.js');
  aloneScript ??= build({
    ...(bundleOptions as BuildOptions),
    entryPoints: [join(ROOT, 'bench/store-alone.ts')],
    external: ['@duckdb/node-api'],
    outfile: out,
  }).then(() => out);
  return aloneScript;
}

/** The rows of an NDJSON file in files of 1,000 (a page each) under `dir`. */
function splitPages(ndjson: string, dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const lines = readFileSync(ndjson, 'utf8').split('\n').filter(Boolean);
  const files: string[] = [];
  for (let i = 0; i < lines.length; i += 1000) {
    const f = join(dir, `page-${files.length}.ndjson`);
    writeFileSync(f, `${lines.slice(i, i + 1000).join('\n')}\n`);
    files.push(f);
  }
  return files;
}

/**
 * DuckDB alone storing the rows of `files` (`splitPages`), in a process that does nothing else
 * (`bench/store-alone.ts`): `per` files to a transaction, then a checkpoint. Returns its peak RSS and the RSS it
 * started from with the warehouse open.
 */
async function storeAlone(
  files: readonly string[],
  per: number,
  limit = 'default',
): Promise<{ rows: number; startMb: number; peakMb: number } | { error: string }> {
  const dir = join(work, `alone-${per}-${limit}`);
  const child = spawn(process.execPath, [await storeAloneScript(), dir, limit, String(per), ...files], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  rmSync(dir, { recursive: true, force: true });
  if (code !== 0) return { error: /Out of Memory Error[^\n(]*/.exec(err)?.[0] ?? `exit ${code}: ${err.slice(-300)}` };
  return JSON.parse(out) as { rows: number; startMb: number; peakMb: number };
}

/**
 * (e) DuckDB's native `read_json` of the same file, with the types it infers itself and no casts: the yardstick that
 * keeps the ceiling honest (a table whose types made the ceiling slow would hide the exporter's cost).
 */
function nativeIngest(ndjson: string): Promise<{ rows: number; secs: number }> {
  return timedIngest('native', {
    run: `CREATE TABLE native AS SELECT * FROM read_json(${lit(ndjson)}, format = 'newline_delimited')`,
    count: 'native',
  });
}

/** A recording proxy in front of the sandbox: answers pass through, and the good ones are kept for a replay. */
class Recorder {
  readonly pages = new Map<string, string>();
  private server: Server | undefined;

  constructor(private readonly upstream: string) {}

  async listen(): Promise<string> {
    this.server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      const key = `${req.url}\n${body}`;
      const r = await fetch(`${this.upstream}${req.url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': String(req.headers['user-agent']) },
        body,
      });
      const text = await r.text();
      if (r.status === 200) this.pages.set(key, text);
      res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'text/plain' }).end(text);
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  close(): Promise<void> {
    return new Promise((r) => this.server!.close(() => r()));
  }
}

/** One `pool-export run` as its own process, with its peak memory (VmHWM) and the ledger's task figures. */
async function exportRun(
  url: string,
  apiKey: string,
  dataDir: string,
  args: string[],
  config: Record<string, unknown> = {},
): Promise<{
  secs: number;
  peakMb: number;
  code: number | null;
  out: string;
  taskRows: number;
  taskSecs: number;
  /** The lake write and views file (`ms` of the run's `lake-written` log line). */
  lakeMs: number;
  /** The lake files that write wrote (`files` of the same line). */
  lakeFiles: number;
}> {
  const cfg = join(work, `config-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(cfg, JSON.stringify(config));
  const t = performance.now();
  const child = spawn(
    process.execPath,
    // The export alone: a run's own verification of what it touched is measured by bench/verify-cost.ts.
    [BIN, 'run', ...(args.includes('--chains') ? [] : ['--chains', 'bsc']), '--no-verify', '--config', cfg, ...args],
    {
      env: {
        ...process.env,
        POOL_EXPORT_API_KEY: apiKey,
        POOL_EXPORT_BASE_URL: url,
        POOL_EXPORT_DATA_DIR: dataDir,
        POOL_EXPORT_DEVELOPER_ID: 'bench',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  let lakeMs = 0;
  let lakeFiles = 0;
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    const lines = d.split('\n');
    for (const l of lines)
      if (l.includes('"lake-written"')) {
        lakeMs = Number(/"ms":(\d+)/.exec(l)?.[1] ?? 0);
        lakeFiles = Number(/"files":(\d+)/.exec(l)?.[1] ?? 0);
      }
    out += lines.filter((l) => !l.startsWith('{')).join('\n');
  });
  let peakKb = 0;
  const poll = setInterval(() => {
    try {
      peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]));
    } catch {
      /* exited */
    }
  }, 50);
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  clearInterval(poll);
  const secs = (performance.now() - t) / 1000;
  if (code !== 0) return { secs, peakMb: peakKb / 1024, code, out, taskRows: 0, taskSecs: 0, lakeMs, lakeFiles };
  const w = await Warehouse.open(dataDir, { readOnly: true });
  try {
    const r = (
      await w.all(`SELECT sum(rows) AS n, date_diff('millisecond', min(started_at), max(ended_at)) AS ms FROM _pool_export.run_tasks
      WHERE run_id = (SELECT run_id FROM _pool_export.runs ORDER BY started_at DESC LIMIT 1)`)
    )[0]!;
    return {
      secs,
      peakMb: peakKb / 1024,
      code,
      out,
      taskRows: Number(r.n ?? 0),
      taskSecs: Number(r.ms ?? 0) / 1000,
      lakeMs,
      lakeFiles,
    };
  } finally {
    await w.close();
  }
}

/**
 * Runs `run` and adds the share of its time the sandbox spent executing and encoding answers (`busyMs` of its stats):
 * near 100% means the sandbox, not the client, set the pace.
 */
async function withBusy<T>(
  sb: SandboxProcess,
  run: () => Promise<T>,
  secsOf: (r: T) => number,
): Promise<T & { busy: string; busyPct: number }> {
  await sb.control('stats', {});
  const r = await run();
  const { busyMs } = await sb.control<{ busyMs: number }>('stats');
  const busyPct = (busyMs / (secsOf(r) * 1000)) * 100;
  return { ...r, busy: `sandbox busy ${busyPct.toFixed(0)}%`, busyPct };
}

let own: ReturnType<typeof tinyRun> | undefined;
/** The run of `tinyRun`, made once for the sections that need it. */
const processOwn = () => (own ??= tinyRun());

/** A first backfill of 1,111 swaps: what an export's process holds whatever its size (peak RSS). */
async function tinyRun(): Promise<Awaited<ReturnType<typeof exportRun>>> {
  const sb = await startSandbox(['--scale', '10', '--burst', String(BURST), '--chains', String(CHAIN)]);
  try {
    const r = await exportRun(sb.url, sb.apiKey, join(work, 'tiny'), ['--datasets', 'dodoex.swaps']);
    must(r, 'pool-export run (1,101 swaps)');
    lines.push({
      section: 'memory: the process itself',
      what: `pool-export run, ${fmt(r.taskRows)} swaps, default settings`,
      rows: r.taskRows,
      secs: r.secs.toFixed(2),
      rate: '',
      ratio: '',
      note: `peak RSS ${fmt(r.peakMb)} MB: the runtime, DuckDB and the page worker, with next to no data`,
    });
    return r;
  } finally {
    await sb.stop();
  }
}

/**
 * (c2) The exporter's checks of every value (`checkPage`, what the page worker runs on each page), alone, on the
 * recorded pages of rows, parsed beforehand: the part of the task phase's work that the floor leaves out.
 */
async function checksAlone(pages: ReadonlyMap<string, string>): Promise<Cost & { rows: number }> {
  const parsed = [...pages.values()]
    .map((text) => (JSON.parse(text) as { data?: { rows?: unknown } }).data?.rows)
    .filter((rows): rows is unknown[] => Array.isArray(rows));
  let rows = 0;
  const c = await cost(async () => {
    for (const items of parsed) {
      checkPage(SWAPS, CHAIN, items);
      rows += items.length;
    }
  });
  return { ...c, rows };
}

/** The replay server's counters, with the processor time it has used so far. */
async function replayStats(url: string): Promise<{ served: number; missed: number; cpuMs: number }> {
  return (await fetch(`${url}/_replay/stats`)).json() as Promise<{ served: number; missed: number; cpuMs: number }>;
}

/** `bench/replay-server.ts` in its own process, serving `pages`. */
async function startReplay(pages: Map<string, string>): Promise<{ url: string; stop: () => void }> {
  const file = join(work, 'pages.json');
  writeFileSync(file, JSON.stringify(Object.fromEntries(pages)));
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/replay-server.ts'), file], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /listening (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`the replay server exited (${code}) before listening`)));
  });
  return { url, stop: () => child.kill() };
}

async function throughput(): Promise<void> {
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
      ...(startupSecs === undefined
        ? {}
        : {
            room: `${(c.secs / (startupSecs + Math.max(c.secs, wholeWork / cores))).toFixed(2)} × floor: the start-up of \`status\` (${startupSecs.toFixed(2)} s), then fetch and parse, checks, INSERT, checkpoint and lake write, measured apart: ${wholeWork.toFixed(2)} s of processor time (${(wholeWork / cores).toFixed(2)} s on ${cores} cores), with no upstream sharing the cores`,
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

async function allowance(): Promise<void> {
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

async function memory(): Promise<void> {
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

/**
 * Wall seconds and peak RSS (MB) of one short command of the CLI, read by a preload at its exit. `status` on an empty
 * folder exits 3 (nothing is fresh), which is its answer, not a failure.
 */
function timed(args: string[], env: NodeJS.ProcessEnv): Promise<{ secs: number; peakMb: number }> {
  const hwm = `data:text/javascript,${encodeURIComponent(
    "import { readFileSync, writeSync } from 'node:fs'; process.on('exit', () => writeSync(2, '\\nVMHWM ' + /VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1] + '\\n'));",
  )}`;
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(process.execPath, ['--import', hwm, BIN, ...args], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('close', (code) => {
      const secs = (performance.now() - t) / 1000;
      const kb = /VMHWM (\d+)/.exec(err);
      if ((code !== 0 && code !== 3) || !kb)
        reject(new Error(`pool-export ${args.join(' ')} failed (exit ${code}): ${err.slice(-500)}`));
      else resolve({ secs, peakMb: Number(kb[1]) / 1024 });
    });
  });
}

async function startup(): Promise<void> {
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
    if (args[0] === 'status') startupSecs = secs;
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
async function noop(): Promise<void> {
  // The issue's scale in the full suite: every job on the demo's 8 chains and scale (32 routes), as `make bench-noop`;
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

/** Runs a bench script of this folder with `args`; its result, and the lines of its output that `line` matches. */
function scriptRows(args: string[], line: RegExp) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(HERE, ...args.slice(0, 1)), ...args.slice(1)], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  const rows = r.stdout
    .split('\n')
    .map((l) => line.exec(l))
    .filter((m): m is RegExpExecArray => m !== null);
  return { r, rows };
}

/**
 * A DODO-only run against the last commit before subgraphs of any schema (`bench/base-compare.ts`, full suite only):
 * paired no-op runs and runs after 100 new blocks on the demo's data, each pair on copies of one folder.
 */
async function base(): Promise<void> {
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
async function upload(): Promise<void> {
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

/** The lake's readers and runs (bench/lake-bench.ts). */
function lake(): Promise<void> {
  return lakeBench({
    quick: QUICK,
    work,
    log,
    exportRun,
    timed,
    line: (l) => lines.push({ section: 'lake: its readers and its runs', ...l }),
    target,
  });
}

/** A backfill of a deployment that prunes its history while its head moves (bench/pruned-bench.ts). */
function pruned(): Promise<void> {
  return prunedBench({
    quick: QUICK,
    work,
    log,
    line: (l) => lines.push({ section: 'pruned: a deployment that keeps little history', ...l }),
  });
}

/** Every report as a table and as CSV at a real chain's size (bench/report-output.ts). */
function reports(): Promise<void> {
  return reportOutputBench({
    quick: QUICK,
    work,
    log,
    exportRun,
    timed,
    line: (l) => lines.push({ section: 'reports: a table against CSV', ...l }),
    target,
  });
}

const started = new Date();
try {
  const sections: Record<string, () => Promise<void>> = {
    startup,
    throughput,
    allowance,
    memory,
    noop,
    base,
    upload,
    lake,
    pruned,
    reports,
  };
  const unknown = (ONLY ?? []).filter((k) => !(k in sections));
  if (unknown.length)
    throw new Error(
      `--only: unknown section ${unknown.join(', ')}; the sections are ${Object.keys(sections).join(', ')}`,
    );
  for (const [name, run] of Object.entries(sections)) if (!ONLY || ONLY.includes(name)) await run();
} finally {
  rmSync(work, { recursive: true, force: true });
}
const table = [
  `# pool-export benchmark (${QUICK ? 'quick' : 'full'}), ${started.toISOString().slice(0, 16)}Z, ${cpus().length} cores, Node ${process.version}`,
  '',
  '| measurement | what | rows | seconds | rows/s (or req/s) | ratio | note |',
  '|---|---|---:|---:|---:|---|---|',
  ...lines.map(
    (l) =>
      `| ${l.section} | ${l.what} | ${typeof l.rows === 'number' ? fmt(l.rows) : l.rows} | ${l.secs} | ${l.rate} | ${l.ratio} | ${l.note} |`,
  ),
  '',
  ...(targets.length
    ? [
        '## Targets',
        '',
        '| # | measurement | target | this run | met | room this run leaves |',
        '|---|---|---|---|---|---|',
        ...[...targets]
          .sort((a, b) => a.n - b.n)
          .map(
            (t) =>
              `| ${t.n} | ${t.what} | ${t.want} | ${t.got} | ${QUICK && t.sized ? '– (quick run: smaller size)' : t.met ? 'yes' : '**no**'} | ${t.room ?? ''} |`,
          ),
        '',
      ]
    : []),
].join('\n');
process.stdout.write(table);
const dir = join(ROOT, 'bench/results');
mkdirSync(dir, { recursive: true });
const file = join(
  dir,
  `${started.toISOString().slice(0, 10)}-${QUICK ? 'quick' : 'full'}${ONLY ? `-${ONLY.join('-')}` : ''}.md`,
);
writeFileSync(file, table);
log(`written to ${file}`);
