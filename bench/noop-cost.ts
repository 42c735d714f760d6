/**
 * What a run costs by what is new, on the demo's data (8 chains, every job, `--scale 5000`): a backfill, then a run
 * with nothing new upstream, then runs after 100 new blocks. Each run after new blocks starts from the same state of
 * one data folder, at its own path: with the batched first pages (one request per route for what is new, the default)
 * and without them (`batchDatasets: 0`: each task asks its own first page, as every run did before), the baseline of
 * the same run. The batched run is made three times and its median reported, as the no-op's is. For each: the requests the sandbox served (`/_sandbox/stats`), the wall time of the whole
 * command, and the lake files its lake write wrote (`lake-written`). Then the requests a day of the default schedules
 * (each job's cron), from each job's own run after 100 new blocks, with and without the batch.
 *
 *   npx tsx bench/noop-cost.ts      (make bench-noop; about 4 minutes)
 */
import { cpSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '../src/sandbox/spawn.ts';
import { cliRun } from './util.ts';

const sb = await startSandbox(['--scale', '5000', '--now', '2026-11-20T00:00:00Z']);
const root = mkdtempSync(join(tmpdir(), 'pe-noop-'));
const [batched, alone] = [join(root, 'batched'), join(root, 'alone')];
const unbatched = join(root, 'unbatched.json');
writeFileSync(unbatched, JSON.stringify({ batchDatasets: 0 }));
const env = (data: string) => ({
  ...process.env,
  POOL_EXPORT_API_KEY: sb.apiKey,
  POOL_EXPORT_BASE_URL: sb.url,
  POOL_EXPORT_DATA_DIR: data,
});

/** Routes of the 8 chains: the dodoex, token and mine deployments and the liquidity list of each. */
const ROUTES = 8 * 4;

interface Cost {
  readonly requests: number;
  readonly secs: number;
  readonly files: number;
  readonly lakeSecs: number;
}

/** One `run` (every job, or `args`' jobs) on `data`: its requests, seconds and lake files. */
async function run(what: string, data: string, args: string[] = []): Promise<Cost> {
  await sb.control('stats', {});
  const r = cliRun(env(data), ['run', '--log-format', 'json', ...args], what);
  const lake = (r.stdout + r.stderr).split('\n').find((l) => l.includes('"event":"lake-written"'));
  const { files, ms } = lake ? (JSON.parse(lake) as { files: number; ms: number }) : { files: 0, ms: 0 };
  const { requests } = await sb.control<{ requests: number }>('stats');
  return { requests, secs: r.secs, files, lakeSecs: ms / 1000 };
}

const row = (what: string, c: Cost) =>
  `| ${what} | ${c.requests} (${(c.requests / ROUTES).toFixed(1)} per route) | ${c.secs.toFixed(1)} s | ${c.files} (${c.lakeSecs.toFixed(1)} s) |`;

/** Runs a day of each job's default schedule (its cron). */
const RUNS_A_DAY: Readonly<Record<string, number>> = { liquidity: 96, events: 288, state: 24, 'token-mining': 1 };

try {
  const lines = ['| run | requests | wall time | lake files written (lake write) |', '|---|---|---|---|'];
  lines.push(row('backfill of every job', await run('backfill', batched)));
  // Three no-op runs, the median reported: each is a few seconds, where the machine's noise is a large part.
  const noops = [await run('no-op', batched), await run('no-op', batched), await run('no-op', batched)];
  const noop = [...noops].sort((a, b) => a.secs - b.secs)[1]!;
  lines.push(row('nothing new upstream (median of 3)', noop));
  await sb.control('advance', { blocks: 100 });
  // Every run after 100 blocks is made at the folder's own path, from a copy of it kept aside (`pristine`): a folder
  // moved to another path rebuilds its views file, whose views name the lake's files by absolute path (0.4-0.6 s on
  // this data), which a follower, whose folder stays where it is, never pays. Three batched runs, the median reported
  // (one run was as noisy as one no-op); then the unbatched baseline from the same state; the day's runs below go on
  // from the third batched run's folder and from the baseline's.
  const pristine = join(root, 'pristine');
  cpSync(batched, pristine, { recursive: true });
  const fresh = () => {
    rmSync(batched, { recursive: true, force: true });
    cpSync(pristine, batched, { recursive: true });
  };
  const incs: Cost[] = [];
  for (let i = 0; i < 3; i++) {
    if (i > 0) fresh();
    incs.push(await run('incremental', batched));
  }
  if (new Set(incs.map((c) => `${c.requests}/${c.files}`)).size !== 1)
    throw new Error(`the three runs after 100 blocks differ: ${JSON.stringify(incs)}`);
  const inc = [...incs].sort((a, b) => a.secs - b.secs)[1]!;
  const kept = join(root, 'kept');
  renameSync(batched, kept);
  cpSync(pristine, batched, { recursive: true });
  const base = await run('incremental, unbatched', batched, ['--config', unbatched]);
  renameSync(batched, alone);
  renameSync(kept, batched);
  lines.push(row('after 100 new blocks, one batch per route (median of 3)', inc));
  lines.push(row('after 100 new blocks, a first request per task (baseline)', base));
  lines.push('');
  lines.push(
    `target 1 (no-op at most 2 requests per route, and at most 1/8 of the wall time of a run that reads every task, as every run did before: the unbatched run after 100 blocks): ${(noop.requests / ROUTES).toFixed(2)} per route: ${noop.requests <= 2 * ROUTES ? 'met' : 'not met'}; ${noop.secs.toFixed(1)} s against ${base.secs.toFixed(1)} s, 1/${(base.secs / noop.secs).toFixed(1)}: ${noop.secs * 8 <= base.secs ? 'met' : 'not met'}`,
  );
  lines.push(
    `target 2 (after 100 blocks at most 3 requests per route, plus full pages): ${(inc.requests / ROUTES).toFixed(2)} per route against ${(base.requests / ROUTES).toFixed(2)} unbatched (${(base.requests / inc.requests).toFixed(1)} × fewer): ${inc.requests <= 3 * ROUTES ? 'met' : 'not met'}; wall time ${(inc.secs / noop.secs).toFixed(2)} × the no-op's (target at most 3.5 ×; the three: ${incs.map((c) => `${c.secs.toFixed(1)} s`).join(', ')}; the no-ops: ${noops.map((c) => `${c.secs.toFixed(1)} s`).join(', ')}), ${(inc.secs / base.secs).toFixed(2)} × the unbatched run's`,
  );
  lines.push(
    `target 3 (a no-op rewrites no lake file): ${noop.files} written: ${noop.files === 0 ? 'met' : 'not met'} (an unchanged liquidity list stores no new snapshot)`,
  );
  // Requests a day of the default schedules, each job on its own after 100 new blocks (something new each run).
  await sb.control('advance', { blocks: 100 });
  cpSync(batched, alone, { recursive: true, force: true });
  lines.push('', '| job | runs a day | requests a run, batched | unbatched | requests a day, batched | unbatched |');
  lines.push('|---|---|---|---|---|---|');
  let [dayBatched, dayAlone] = [0, 0];
  for (const [job, runs] of Object.entries(RUNS_A_DAY)) {
    const b = await run(`${job}, batched`, batched, ['--jobs', job]);
    const a = await run(`${job}, unbatched`, alone, ['--jobs', job, '--config', unbatched]);
    dayBatched += runs * b.requests;
    dayAlone += runs * a.requests;
    lines.push(`| ${job} | ${runs} | ${b.requests} | ${a.requests} | ${runs * b.requests} | ${runs * a.requests} |`);
  }
  lines.push(`| every job | | | | ${dayBatched} | ${dayAlone} |`);
  console.log(lines.join('\n'));
} finally {
  await sb.stop();
  rmSync(root, { recursive: true, force: true });
}
