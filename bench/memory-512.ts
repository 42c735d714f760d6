/**
 * What memory costs a large first backfill, in a matrix: one chain whose one month holds N swaps (2,000,000 by
 * default), backfilled and then run again after 1,000 new blocks,
 * - to a local lake and to a bucket lake (s3rver, its own process);
 * - as a process on this machine, with `duckdbMemoryLimit: "auto"` (whatever this host's control group gives: 25% of
 *   the machine without a limit), and in the image under `--memory=512m` (auto: 204 MiB);
 * and, as the baseline of the time target, the bucket backfill as a process with `duckdbMemoryLimit: "2GB"`.
 * Each cell prints its exit codes, wall times, peak memory (the process' VmHWM; the container's anonymous memory,
 * sampled every 200 ms) and whether it is exact: the warehouse's swaps (id and timestamp) are the sandbox's, read from `/_sandbox/rows`, and the
 * lake (its files, or the bucket's objects fetched by the bench's own S3 client) holds as many rows, each id once.
 * Then target 8 of the suite at this size: every job of that chain exported, and every report over its local lake
 * against the same over one file per table.
 * `make bench-512` (about 60 minutes at 2,000,000 swaps, 25 of them the export of every job for target 8);
 * `npx tsx bench/memory-512.ts --swaps 200000` for a smaller one, `--cells container-bucket` for some cells (the baseline
 * runs always), `--no-reports` without target 8.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DuckDBInstance } from '@duckdb/node-api';
import { buildImage, IMAGE } from '../scripts/image.ts';
import { BIN, callControl, startSandbox } from '../src/sandbox/spawn.ts';
import { bucketEnv, getBytes, listAll, type S3Server, startS3rver, testClient } from '../test/support/s3-store.ts';
import { compactedCopy, reportTimes } from './lake-bench.ts';

const at = process.argv.indexOf('--swaps');
const SWAPS = at > 0 ? Number(process.argv[at + 1]) : 2_000_000;
const ARGS = ['run', '--chains', 'bsc', '--datasets', 'dodoex.swaps', '--no-verify'];
/** History of 25 days ending on the 28th: every swap in one calendar month. */
const NOW = '2026-10-28T00:00:00Z';

/** Waits for a child to exit while sampling `sample` every 200 ms; the exit code and the largest sample. */
function watch(
  child: ReturnType<typeof spawn>,
  sample: () => number | undefined,
): Promise<{ code: number | null; peak: number }> {
  let peak = 0;
  const poll = setInterval(() => {
    const v = sample();
    if (v !== undefined) peak = Math.max(peak, v);
  }, 200);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearInterval(poll);
      resolve({ code, peak });
    }),
  );
}

/**
 * A running container's resident memory, in bytes: the anonymous memory of its control group (cgroup v1's
 * `total_rss`, v2's `anon`), sampled. Not the group's usage peak, which counts the page cache of the files it wrote
 * (the kernel takes that back under the limit) and so reads the limit itself on a run that writes much.
 */
function cgroupRss(id: string): number | undefined {
  for (const [f, key] of [
    [`/sys/fs/cgroup/memory/docker/${id}/memory.stat`, 'total_rss'],
    [`/sys/fs/cgroup/system.slice/docker-${id}.scope/memory.stat`, 'anon'],
  ] as const) {
    if (!existsSync(f)) continue;
    const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(readFileSync(f, 'utf8'));
    return m ? Number(m[1]) : undefined;
  }
  return undefined;
}

/** A process' peak resident memory (VmHWM), in bytes. */
function vmHwm(pid: number | undefined): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

interface Cell {
  readonly name: string;
  readonly where: 'process' | 'container';
  readonly bucket: boolean;
  /** A config file's `duckdbMemoryLimit` (the process only); auto without. */
  readonly memoryLimit?: string;
  /** Only the backfill (the baseline). */
  readonly backfillOnly?: boolean;
}

interface Step {
  readonly code: number | null;
  readonly secs: number;
  /** Peak resident memory: the process' VmHWM, or the container's anonymous memory sampled. */
  readonly peak: number;
  readonly oomKilled?: boolean;
}

const image = buildImage();
const [sb, s3] = await Promise.all([
  startSandbox(['--scale', String(SWAPS), '--chains', '56', '--history-days', '25', '--now', NOW]),
  startS3rver(),
]);
const dir = mkdtempSync(join(tmpdir(), 'pool-export-bench-512-'));
const env = { POOL_EXPORT_API_KEY: sb.apiKey, POOL_EXPORT_BASE_URL: sb.url };

/** One run of a cell into its data folder. */
async function step(cell: Cell, data: string, args: readonly string[] = ARGS): Promise<Step> {
  const lake = cell.bucket ? bucketEnv(s3.endpoint, `s3://${s3.bucket}/${cell.name}`) : {};
  const started = performance.now();
  if (cell.where === 'process') {
    const config = join(dir, `${cell.name}.json`);
    writeFileSync(config, JSON.stringify(cell.memoryLimit ? { duckdbMemoryLimit: cell.memoryLimit } : {}));
    const child = spawn(process.execPath, [BIN, ...args, '--config', config], {
      env: { ...process.env, ...env, ...lake, POOL_EXPORT_DATA_DIR: data },
      stdio: 'ignore',
    });
    const r = await watch(child, () => vmHwm(child.pid));
    return { ...r, secs: (performance.now() - started) / 1000 };
  }
  const name = `pool-export-bench-512-${process.pid}-${cell.name}`;
  const envArgs = Object.entries({ ...env, ...lake }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  const docker = spawn(
    'docker',
    ['run', '--name', name, '--network', 'host', '--memory=512m', '-v', `${data}:/data`, ...envArgs, IMAGE, ...ARGS],
    { stdio: 'ignore' },
  );
  let id: string | undefined;
  const r = await watch(docker, () => {
    id ??=
      spawnSync('docker', ['inspect', '--format', '{{.Id}}', name], { encoding: 'utf8' }).stdout.trim() || undefined;
    return id ? cgroupRss(id) : undefined;
  });
  const oom = spawnSync('docker', ['inspect', '--format', '{{.State.OOMKilled}}', name], { encoding: 'utf8' });
  spawnSync('docker', ['rm', name]);
  const killed = oom.stdout.trim() === 'true';
  if (killed) process.stderr.write(`${cell.name}: the container was OOM-killed\n`);
  return { ...r, secs: (performance.now() - started) / 1000, ...(killed ? { oomKilled: true } : {}) };
}

/** The Parquet files of a cell's lake: its folder's, or the bucket's objects fetched into a folder. */
async function lakeFiles(cell: Cell, data: string): Promise<string[]> {
  if (!cell.bucket) {
    const out: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d)) {
        const p = join(d, e);
        if (e.startsWith('.')) continue;
        if (statSync(p).isDirectory()) walk(p);
        else if (e.endsWith('.parquet') && p.includes('/swaps/')) out.push(p);
      }
    };
    walk(join(data, 'lake'));
    return out;
  }
  const into = join(dir, `${cell.name}-fetched`);
  mkdirSync(into, { recursive: true });
  const c = testClient(s3.endpoint);
  const keys = (await listAll(c, s3.bucket, `${cell.name}/dodoex/swaps/`))
    .map((o) => o.key)
    .filter((k) => k.endsWith('.parquet'));
  return Promise.all(
    keys.map(async (k, i) => {
      const f = join(into, `${i}.parquet`);
      writeFileSync(f, await getBytes(c, s3.bucket, k));
      return f;
    }),
  );
}

/** Whether a cell's warehouse and lake hold exactly the sandbox's swaps; a line saying what differs otherwise. */
async function exactness(cell: Cell, data: string, upstream: string): Promise<string> {
  const files = await lakeFiles(cell, data);
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    await c.run(`ATTACH '${join(data, 'warehouse.duckdb')}' AS w (READ_ONLY)`);
    const one = async (sql: string) => Number((await (await c.runAndReadAll(sql)).getRowObjects())[0]!.n);
    const up = `(SELECT id, CAST("timestamp" AS VARCHAR) AS t FROM read_json('${upstream}', format = 'newline_delimited', columns = {id: 'VARCHAR', "timestamp": 'VARCHAR'}))`;
    const wh = '(SELECT id, CAST("timestamp" AS VARCHAR) AS t FROM w.dodoex.swaps WHERE chain_id = 56)';
    const missing = await one(`SELECT count(*) AS n FROM (${up} EXCEPT ${wh})`);
    const extra = await one(`SELECT count(*) AS n FROM (${wh} EXCEPT ${up})`);
    const stored = await one(`SELECT count(*) AS n FROM ${wh}`);
    const list = `[${files.map((f) => `'${f}'`).join(', ')}]`;
    const lakeRows = files.length ? await one(`SELECT count(*) AS n FROM read_parquet(${list})`) : 0;
    const lakeIds = files.length ? await one(`SELECT count(DISTINCT id) AS n FROM read_parquet(${list})`) : 0;
    const wrong = [
      missing ? `${missing} swaps missing` : '',
      extra ? `${extra} swaps not upstream` : '',
      lakeRows !== stored ? `lake ${lakeRows} rows against ${stored}` : '',
      lakeIds !== lakeRows ? `lake ${lakeRows - lakeIds} duplicates` : '',
    ].filter(Boolean);
    return wrong.length ? wrong.join(', ') : `exact (${stored.toLocaleString('en')} swaps, ${files.length} lake files)`;
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

/** The sandbox's swaps of bsc (id and timestamp) as NDJSON in a file. */
async function upstreamRows(name: string): Promise<string> {
  const file = join(dir, `${name}.ndjson`);
  const res = await fetch(`${sb.url}/_sandbox/rows?chainId=56&schema=dodoex&entity=Swap&fields=id,timestamp`);
  if (!res.ok) throw new Error(`the sandbox's rows: HTTP ${res.status} ${await res.text()}`);
  await pipeline(Readable.fromWeb(res.body as never), createWriteStream(file));
  return file;
}

/**
 * Target 8 at this size: every job of the same chain exported (its swaps, and every other dataset at the same scale),
 * then every report over its local lake against the same over a copy with one file per table.
 */
async function reportsTarget(): Promise<void> {
  const local = join(dir, 'reports');
  const full = await step({ name: 'reports', where: 'process', bucket: false }, local, ['run', '--chains', 'bsc']);
  if (full.code !== 0) throw new Error(`the export of every job exited ${full.code}`);
  const ref = join(dir, 'compacted');
  await compactedCopy(local, ref);
  const [lakeTimes, refTimes] = [await reportTimes(local), await reportTimes(ref)];
  process.stdout.write(
    [
      `every report over the lake of every job of that chain (${SWAPS.toLocaleString('en')} swaps in one month; exported in ${full.secs.toFixed(0)} s, peak ${mb(full.peak)}) against one file per table (target 8: ≤ 2 × each)`,
      '| report | lake, s | one file per table, s | ratio |',
      '|---|---|---|---|',
      ...[...lakeTimes].map(
        ([name, secs]) =>
          `| ${name} | ${secs.toFixed(2)} | ${refTimes.get(name)!.toFixed(2)} | ${(secs / refTimes.get(name)!).toFixed(2)} |`,
      ),
      '',
    ].join('\n'),
  );
}

const ALL_CELLS: Cell[] = [
  { name: 'baseline-bucket-2gb', where: 'process', bucket: true, memoryLimit: '2GB', backfillOnly: true },
  { name: 'process-local', where: 'process', bucket: false },
  { name: 'process-bucket', where: 'process', bucket: true },
  { name: 'container-local', where: 'container', bucket: false },
  { name: 'container-bucket', where: 'container', bucket: true },
];

/** `--cells a,b`: those cells alone (the baseline always runs: the ratios are against it); `--no-reports`: no target 8. */
const only = process.argv.includes('--cells') ? process.argv[process.argv.indexOf('--cells') + 1]!.split(',') : null;
const CELLS = ALL_CELLS.filter((c) => c.backfillOnly || !only || only.includes(c.name));
const REPORTS = !process.argv.includes('--no-reports');

const mb = (bytes: number) => (bytes ? `${(bytes / 1024 ** 2).toFixed(0)} MiB` : 'not read');
try {
  const backfilled = await upstreamRows('backfill');
  const results: { cell: Cell; backfill: Step; exact: string; next?: Step; nextExact?: string }[] = [];
  // Every cell's backfill at the same head, then every cell's incremental run at the next one.
  for (const cell of CELLS) {
    const data = join(dir, cell.name);
    mkdirSync(data);
    chmodSync(data, 0o777);
    const backfill = await step(cell, data);
    process.stderr.write(`${cell.name}: backfill exit ${backfill.code} in ${backfill.secs.toFixed(0)} s\n`);
    results.push({ cell, backfill, exact: await exactness(cell, data, backfilled) });
  }
  await callControl(sb.url, 'advance', { blocks: 1000 });
  const advanced = await upstreamRows('advanced');
  for (const r of results.filter((x) => !x.cell.backfillOnly)) {
    const data = join(dir, r.cell.name);
    r.next = await step(r.cell, data);
    r.nextExact = await exactness(r.cell, data, advanced);
  }
  const baseline = results[0]!.backfill.secs;
  const limitOf = (c: Cell) => c.memoryLimit ?? (c.where === 'container' ? 'auto (204 MiB)' : 'auto');
  process.stdout.write(
    [
      `one month of ${SWAPS.toLocaleString('en')} swaps on one chain, then 1,000 new blocks (image ${image.name}, ${mb(image.bytes)})`,
      '| cell | lake | memory | duckdbMemoryLimit | backfill: exit, s, peak | ratio to the 2GB bucket backfill | exact | incremental: exit, s, peak | exact |',
      '|---|---|---|---|---|---|---|---|---|',
      ...results
        .map(({ cell, backfill: b, exact, next: n, nextExact }) =>
          [
            cell.name,
            cell.bucket ? 'bucket' : 'local',
            cell.where === 'container' ? '--memory=512m' : 'no limit',
            limitOf(cell),
            `${b.code}, ${b.secs.toFixed(0)}, ${mb(b.peak)}`,
            (b.secs / baseline).toFixed(2),
            exact,
            n ? `${n.code}, ${n.secs.toFixed(0)}, ${mb(n.peak)}` : '',
            nextExact ?? '',
          ].join(' | '),
        )
        .map((l) => `| ${l} |`),
      '',
    ].join('\n'),
  );
  if (REPORTS) await reportsTarget();
  const bad = results.filter(
    (r) =>
      r.backfill.code !== 0 ||
      !r.exact.startsWith('exact') ||
      (r.next && (r.next.code !== 0 || !r.nextExact?.startsWith('exact'))) ||
      r.backfill.oomKilled ||
      r.next?.oomKilled ||
      (r.cell.where === 'container' && Math.max(r.backfill.peak, r.next?.peak ?? 0) >= 512 * 1024 ** 2),
  );
  if (bad.length) {
    process.stderr.write(`not met: ${bad.map((r) => r.cell.name).join(', ')}\n`);
    process.exitCode = 1;
  }
} finally {
  await Promise.all([sb.stop(), (s3 as S3Server).stop()]);
  rmSync(dir, { recursive: true, force: true });
}
