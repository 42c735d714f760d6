/**
 * How fresh `schedule --every` keeps the data, and what a bucket lake that follows the chain costs: a sandbox whose
 * chain makes a block every second (arbitrum: one second of chain time per block, so its block times are the wall
 * clock's), the events job backfilled, then `schedule --jobs events --every 10s` for some minutes, to a bucket lake on
 * s3rver (its own process), twice in the same run:
 * - before: the bucket published by every run (`lake.publishEvery` "0s", what every run did before the cadence);
 * - after: the bucket published on the cadence (`lake.publishEvery` unset: `schedule`'s default, 5 minutes; or
 *   `--publish-every`).
 * Every 5 s, `status --json` gives the lag of `dodoex.swaps` behind the upstream's head (in seconds, by the blocks'
 * times) and the bucket's own lag (from the newest block time its published state covers); at the end, the bytes
 * uploaded an hour (the `lake-published` events, the publish as the schedule stops included), the warehouse's lag
 * (median, p95) and the bucket's (median, p95, largest) against the cadence and one run (the interval and the longest
 * run, from its start to its publish), and the requests an hour beside those of the events job's default 5-minute schedule.
 *
 *   npx tsx bench/follow-lag.ts [--minutes 10] [--every 10s] [--publish-every 5m]   (make bench-follow: 10 minutes each)
 *   npx tsx bench/follow-lag.ts --local                                               (a local lake alone)
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCHEDULE_PUBLISH_EVERY_SECS } from '../src/bucket/cadence.ts';
import { BIN, startSandbox } from '../src/sandbox/spawn.ts';
import { parseDuration } from '../src/util/duration.ts';
import { bucketEnv, type S3Server, startS3rver } from '../test/support/s3-store.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const minutes = Number(arg('--minutes', '10'));
const every = arg('--every', '10s');
const local = process.argv.includes('--local');
const cadence = arg('--publish-every', '');
const cadenceSecs = cadence ? parseDuration(cadence, '--publish-every') : SCHEDULE_PUBLISH_EVERY_SECS;

// About one swap a second (100,000 over a day of history), so that a run every 10 s has rows to write and publish.
const sb = await startSandbox([
  '--scale',
  '100000',
  '--history-days',
  '1',
  '--chains',
  '42161',
  '--block-time',
  '1000',
]);
const s3: S3Server | undefined = local ? undefined : await startS3rver();
const root = mkdtempSync(join(tmpdir(), 'pe-follow-'));
const job = ['--chains', 'arbitrum', '--jobs', 'events'];
const env = (data: string, prefix?: string) => ({
  ...process.env,
  POOL_EXPORT_API_KEY: sb.apiKey,
  POOL_EXPORT_BASE_URL: sb.url,
  POOL_EXPORT_DATA_DIR: data,
  ...(s3 && prefix ? bucketEnv(s3.endpoint, `s3://${s3.bucket}/${prefix}`) : {}),
});
const cli = (e: NodeJS.ProcessEnv, args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: e, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}: ${r.stderr.slice(-1500)}`);
  return r.stdout;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const requests = async () => (await sb.control<{ requests: number }>('stats')).requests;
const quantile = (xs: number[], q: number) =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]! : Number.NaN;

/** What one phase of following measured. */
interface Followed {
  readonly lags: number[];
  readonly bucketLags: number[];
  readonly perHour: number;
  readonly publishes: number;
  readonly bytesPerHour: number;
  /** The longest run, from its start to its end (its tasks, lake write and publish), in seconds. */
  readonly longestRunSecs: number;
}

/** Backfills a data folder, then follows the chain with `schedule --every` for `minutes`, sampling the lags. */
async function follow(name: string, opts: { prefix?: string; config?: object }): Promise<Followed> {
  const data = join(root, name);
  const config = join(root, `${name}.json`);
  writeFileSync(config, JSON.stringify({ chains: ['arbitrum'], ...(opts.config ?? {}) }));
  const e = env(data, opts.prefix);
  cli(e, ['run', '--config', config, ...job]);
  const started = await requests();
  const t0 = performance.now();
  let log = '';
  const schedule: ChildProcess = spawn(
    process.execPath,
    [BIN, 'schedule', '--config', config, ...job, '--every', every, '--log-format', 'json'],
    { env: e, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  schedule.stderr!.setEncoding('utf8').on('data', (d: string) => (log += d));
  const lags: number[] = [];
  const bucketLags: number[] = [];
  try {
    await sleep(5000);
    while (performance.now() - t0 < minutes * 60_000) {
      // `status` exits 3 when a dataset is stale: its answer is read all the same.
      const status = spawnSync(process.execPath, [BIN, 'status', '--config', config, '--json', ...job.slice(0, 2)], {
        env: e,
        encoding: 'utf8',
      });
      const s = JSON.parse(status.stdout) as {
        datasets?: { dataset: string; lagSeconds: number | null }[];
        bucket?: { lagSeconds: Record<string, number> };
      };
      const swaps = (s.datasets ?? []).find((d) => d.dataset === 'dodoex.swaps');
      if (swaps?.lagSeconds != null) lags.push(swaps.lagSeconds);
      const b = s.bucket?.lagSeconds.arbitrum;
      if (b !== undefined) bucketLags.push(b);
      await sleep(5000);
    }
  } finally {
    // Stopped by a signal: a bucket lake behind its local lake is published before the process exits.
    const exited = new Promise((r) => schedule.once('exit', r));
    schedule.kill('SIGTERM');
    await exited;
  }
  const hours = (performance.now() - t0) / 3_600_000;
  const events = log
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { event: string; time: string; runId?: string; bytes?: number });
  const published = events.filter((x) => x.event === 'lake-published');
  return {
    lags,
    bucketLags,
    perHour: Math.round(((await requests()) - started) / hours),
    publishes: published.length,
    bytesPerHour: published.reduce((n, x) => n + (x.bytes ?? 0), 0) / hours,
    longestRunSecs: longestRun(events),
  };
}

/** The longest run of a log: from each `run-start` to the `run-done` of the same run, in seconds. */
function longestRun(events: readonly { event: string; time: string; runId?: string }[]): number {
  const started = new Map<string, number>();
  let longest = 0;
  for (const e of events) {
    if (e.event === 'run-start' && e.runId) started.set(e.runId, Date.parse(e.time));
    if (e.event === 'run-done' && e.runId && started.has(e.runId))
      longest = Math.max(longest, (Date.parse(e.time) - started.get(e.runId)!) / 1000);
  }
  return longest;
}

const s = (x: number) => `${Number.isNaN(x) ? '-' : Math.round(x)} s`;
const lagLine = (f: Followed) =>
  `warehouse lag median ${s(quantile(f.lags, 0.5))}, p95 ${s(quantile(f.lags, 0.95))} (${f.lags.length} samples)`;
try {
  // The events job's default schedule: a run after 5 minutes of blocks, 12 an hour.
  const cron = env(join(root, 'cron'));
  cli(cron, ['run', ...job]);
  await sb.control('stats', {});
  await sb.control('advance', { blocks: 300 });
  cli(cron, ['run', ...job]);
  const cronRun = await requests();
  if (local) {
    const f = await follow('follow', {});
    console.log(`schedule --every ${every}, ${minutes} min against a block a second, a local lake: ${lagLine(f)}`);
    console.log(
      `requests an hour: ${f.perHour} with --every ${every}; the 5-minute schedule: ${12 * cronRun} (12 runs of ${cronRun}), its lag up to 300 s and a run`,
    );
  } else {
    const before = await follow('every-run', { prefix: 'every-run', config: { lake: { publishEvery: '0s' } } });
    const after = await follow('cadence', {
      prefix: 'cadence',
      config: cadence ? { lake: { publishEvery: cadence } } : {},
    });
    const mb = (n: number) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${(n / 1e3).toFixed(0)} KB`);
    console.log(
      [
        `schedule --every ${every}, ${minutes} min each against a block a second, to a bucket lake (s3rver):`,
        '',
        '| publish | publishes | uploaded an hour | warehouse lag median, p95 | bucket lag median, p95, largest | requests an hour |',
        '|---|---|---|---|---|---|',
        ...[
          ['every run (before)', before],
          [`every ${cadenceSecs} s (after)`, after],
        ].map(([label, f]) => {
          const x = f as Followed;
          return `| ${label} | ${x.publishes} | ${mb(x.bytesPerHour)} | ${s(quantile(x.lags, 0.5))}, ${s(quantile(x.lags, 0.95))} | ${s(quantile(x.bucketLags, 0.5))}, ${s(quantile(x.bucketLags, 0.95))}, ${s(Math.max(...x.bucketLags))} | ${x.perHour} |`;
        }),
        '',
        `uploaded an hour, after against before: ${(after.bytesPerHour / Math.max(1, before.bytesPerHour)).toFixed(3)} ×`,
        `the bucket's largest lag after: ${s(Math.max(...after.bucketLags))}; target: the cadence (${cadenceSecs} s) and one run (every ${every}, and the longest run, ${after.longestRunSecs.toFixed(1)} s): ${s(cadenceSecs + parseDuration(every, '--every') + after.longestRunSecs)}`,
        `warehouse lag p95 after: ${s(quantile(after.lags, 0.95))} (target: under 30 s); the 5-minute schedule's requests an hour: ${12 * cronRun}`,
      ].join('\n'),
    );
  }
} finally {
  await sb.stop();
  await s3?.stop();
  rmSync(root, { recursive: true, force: true });
}
