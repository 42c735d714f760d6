/**
 * How fresh `schedule --every` keeps the data: a sandbox whose chain makes a block every second (arbitrum: one second
 * of chain time per block, so its block times are the wall clock's), the events job backfilled, then `schedule --jobs
 * events --every 10s` for some minutes. Every 5 s, `status --json` gives the lag of `dodoex.swaps` behind the upstream's
 * head (in seconds, by the blocks' times); at the end, its median, p95 and largest, and the requests an hour the
 * scheduler made, beside those of the events job's default 5-minute schedule (12 runs an hour, each counted on a run
 * after 5 minutes of blocks, in the same sandbox).
 *
 *   npx tsx bench/follow-lag.ts [--minutes 30] [--every 10s]      (make bench-follow: 10 minutes)
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, startSandbox } from '../src/sandbox/spawn.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const minutes = Number(arg('--minutes', '10'));
const every = arg('--every', '10s');

const sb = await startSandbox(['--scale', '1000', '--chains', '42161', '--block-time', '1000']);
const root = mkdtempSync(join(tmpdir(), 'pe-follow-'));
const env = (data: string) => ({
  ...process.env,
  POOL_EXPORT_API_KEY: sb.apiKey,
  POOL_EXPORT_BASE_URL: sb.url,
  POOL_EXPORT_DATA_DIR: data,
});
const cli = (data: string, args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: env(data), encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}: ${r.stderr.slice(-1500)}`);
  return r.stdout;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const requests = async () => (await sb.control<{ requests: number }>('stats')).requests;
const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

let schedule: ChildProcess | undefined;
try {
  const data = join(root, 'follow');
  const job = ['--chains', 'arbitrum', '--jobs', 'events'];
  // The events job's default schedule: a run after 5 minutes of blocks, 12 an hour.
  const cron = join(root, 'cron');
  cli(cron, ['run', ...job]);
  await sb.control('stats', {});
  await sb.control('advance', { blocks: 300 });
  cli(cron, ['run', ...job]);
  const cronRun = await requests();
  // The followed folder is backfilled last, so that the scheduler starts from data seconds old.
  cli(data, ['run', ...job]);
  // Fastest mode.
  const started = await requests();
  const t0 = performance.now();
  schedule = spawn(process.execPath, [BIN, 'schedule', ...job, '--every', every], { env: env(data), stdio: 'ignore' });
  const lags: number[] = [];
  await sleep(5000);
  while (performance.now() - t0 < minutes * 60_000) {
    // `status` exits 3 when a dataset is stale: its answer is read all the same.
    const status = spawnSync(process.execPath, [BIN, 'status', '--json', ...job.slice(0, 2)], {
      env: env(data),
      encoding: 'utf8',
    });
    const rows = JSON.parse(status.stdout) as {
      datasets?: { dataset: string; lagSeconds: number | null }[];
    };
    const swaps = (rows.datasets ?? []).find((d) => d.dataset === 'dodoex.swaps');
    if (swaps?.lagSeconds !== null && swaps?.lagSeconds !== undefined) lags.push(swaps.lagSeconds);
    await sleep(5000);
  }
  const hours = (performance.now() - t0) / 3_600_000;
  const perHour = Math.round(((await requests()) - started) / hours);
  console.log(
    `schedule --every ${every}, ${minutes} min against a block a second: lag of dodoex.swaps over ${lags.length} samples: median ${quantile(lags, 0.5)} s, p95 ${quantile(lags, 0.95)} s, largest ${Math.max(...lags)} s (target: p95 under 30 s)`,
  );
  console.log(
    `requests an hour: ${perHour} with --every ${every}; the 5-minute schedule: ${12 * cronRun} (12 runs of ${cronRun}), its lag up to 300 s and a run`,
  );
} finally {
  schedule?.kill('SIGTERM');
  await sleep(2000);
  await sb.stop();
  rmSync(root, { recursive: true, force: true });
}
