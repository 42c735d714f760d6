/**
 * What every section of the benchmark suite shares (bench/bench.ts): its size flags, its work folder, the lines and
 * targets it prints, and the runs, timings and processes its sections make.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, type SandboxEndpoint, type SandboxProcess, startSandbox } from '../src/sandbox/spawn.ts';
import { Warehouse } from '../src/store/warehouse.ts';
import { query } from '../test/support/sandbox-client.ts';
import { CHAIN } from './ceiling.ts';
import { must } from './util.ts';

/** This folder (bench/). */
export const HERE = dirname(fileURLToPath(import.meta.url));

export const QUICK = process.argv.includes('--quick');
export const ONLY = process.argv.includes('--only')
  ? process.argv[process.argv.indexOf('--only') + 1]!.split(',')
  : undefined;
/** Rows of the throughput comparison, and of the two memory runs. */
export const SMALL = QUICK ? 20_000 : 100_000;
export const MEM_LOW = QUICK ? 20_000 : 500_000;
export const MEM_HIGH = QUICK ? 100_000 : 5_000_000;
/** Swaps the sandbox packs into one block, on top of `--scale`. */
export const BURST = 1100;
export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const work = mkdtempSync(join(tmpdir(), 'pool-export-bench-'));

export type Row = Record<string, unknown> & { id: string };
export interface Line {
  section: string;
  what: string;
  rows: number | string;
  secs: number | string;
  rate: string;
  ratio: string;
  note: string;
}
export const lines: Line[] = [];

/** One target of the throughput-and-memory work, with what this run measured against it. */
export interface Target {
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
export const targets: Target[] = [];
export const target = (t: Target) => targets.push(t);
/** Median wall seconds of `pool-export status` on an empty folder, once the start-up section has run. */
export const measured: { startupSecs?: number } = {};
export const fmt = (n: number, d = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
export const log = (s: string) => process.stderr.write(`${s}\n`);

/** One GraphQL query of the sandbox's dodoex subgraph of the bench chain; returns its data. */
export const gql = <T>(sb: SandboxEndpoint, q: string, variables: Record<string, unknown>) =>
  query(sb, CHAIN, 'dodoex', q, variables) as Promise<T>;

export async function head(sb: SandboxProcess): Promise<{ number: number; timestamp: number }> {
  return (
    await gql<{ _meta: { block: { number: number; timestamp: number } } }>(
      sb,
      '{ _meta { block { number timestamp } } }',
      {},
    )
  )._meta.block;
}

/** Wall and processor seconds (the whole process: every thread, DuckDB's too) of one step. */
export interface Cost {
  readonly secs: number;
  readonly cpu: number;
}

/** This process's processor time so far, user and system, every thread. */
export function cpuSecs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Runs one step and measures it. */
export async function cost(step: () => Promise<unknown>): Promise<Cost> {
  const [t, c] = [performance.now(), cpuSecs()];
  await step();
  return { secs: (performance.now() - t) / 1000, cpu: cpuSecs() - c };
}

/** One `pool-export run` as its own process, with its peak memory (VmHWM) and the ledger's task figures. */
export async function exportRun(
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
export async function withBusy<T>(
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

export let own: ReturnType<typeof tinyRun> | undefined;
/** The run of `tinyRun`, made once for the sections that need it. */
export const processOwn = () => (own ??= tinyRun());

/** A first backfill of 1,111 swaps: what an export's process holds whatever its size (peak RSS). */
export async function tinyRun(): Promise<Awaited<ReturnType<typeof exportRun>>> {
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
 * Wall seconds and peak RSS (MB) of one short command of the CLI, read by a preload at its exit. `status` on an empty
 * folder exits 3 (nothing is fresh), which is its answer, not a failure.
 */
export function timed(args: string[], env: NodeJS.ProcessEnv): Promise<{ secs: number; peakMb: number }> {
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

/** Runs a bench script of this folder with `args`; its result, and the lines of its output that `line` matches. */
export function scriptRows(args: string[], line: RegExp) {
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
