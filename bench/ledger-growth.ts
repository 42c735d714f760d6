/**
 * What a long-running follower's ledger costs each run: the demo's data (8 chains, every job, `--scale 5000`) backfilled,
 * then the ledger given a day of runs every 10 s (8,640 runs of the backfill's 328 tasks, copied with earlier times;
 * `--runs N` for another count), then runs after 100 new blocks, each made on three copies of the same folder: the
 * ledger as a backfill leaves it, the grown one kept whole (`keepRuns` above its runs), and the grown one under the
 * default `keepRuns` (its first run deletes what is past it). Twice, so that the second round shows the steady state.
 * For each: the wall time of the whole command, the ledger's task rows after it, and the bytes of the run ledger as
 * a bucket publish uploads it (`_state/run_tasks.parquet`, written the same way).
 *
 *   npx tsx bench/ledger-growth.ts [--runs 8640]      (make bench-ledger; about 2 minutes)
 */
import { cpSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { startSandbox } from '../src/sandbox/spawn.ts';
import { cliRun } from './util.ts';

const at = process.argv.indexOf('--runs');
const RUNS = at > 0 ? Number(process.argv[at + 1]) : 8_640;
if (!Number.isInteger(RUNS) || RUNS < 1)
  throw new Error(`--runs must be a whole number of at least 1, not ${process.argv[at + 1]}`);

const sb = await startSandbox(['--scale', '5000', '--now', '2026-11-20T00:00:00Z']);
const root = mkdtempSync(join(tmpdir(), 'pe-ledger-'));
const keepAll = join(root, 'keep-all.json');
writeFileSync(keepAll, JSON.stringify({ keepRuns: 1_000_000_000 }));

/** The environment of a command on `data`. */
const env = (data: string) => ({
  ...process.env,
  POOL_EXPORT_API_KEY: sb.apiKey,
  POOL_EXPORT_BASE_URL: sb.url,
  POOL_EXPORT_DATA_DIR: data,
});

/** One `run` of every job on `data`: its seconds. */
const run = (what: string, data: string, args: string[] = []) =>
  cliRun(env(data), ['run', '--log-format', 'json', ...args], what).secs;

/** Runs `fn` on the warehouse of `data`, then closes it. */
async function onWarehouse<T>(data: string, fn: (c: Awaited<ReturnType<DuckDBInstance['connect']>>) => Promise<T>) {
  const db = await DuckDBInstance.create(join(data, 'warehouse.duckdb'));
  const c = await db.connect();
  try {
    return await fn(c);
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

/** The ledger's task rows, and the bytes of `run_tasks` as a publish writes it. */
const ledger = (data: string) =>
  onWarehouse(data, async (c) => {
    const file = join(root, 'run_tasks.parquet');
    await c.run(`COPY (SELECT * FROM _pool_export.run_tasks) TO '${file}' (FORMAT parquet, COMPRESSION zstd)`);
    const n = Number(
      (await c.runAndReadAll('SELECT count(*) AS n FROM _pool_export.run_tasks')).getRowObjectsJson()[0]!.n,
    );
    return { rows: n, bytes: statSync(file).size };
  });

try {
  const base = join(root, 'base');
  run('backfill', base);
  const grown = join(root, 'grown');
  cpSync(base, grown, { recursive: true });
  // A day of runs every 10 s before the backfill's: its last run's tasks and run row, copied with earlier times.
  await onWarehouse(grown, async (c) => {
    const last = `(SELECT run_id FROM _pool_export.runs ORDER BY started_at DESC LIMIT 1)`;
    const times = (cols: string[]) => cols.map((x) => `${x} - INTERVAL (g.i * 10) SECOND AS ${x}`).join(', ');
    await c.run(
      `INSERT INTO _pool_export.run_tasks SELECT t.* REPLACE ('day-' || g.i AS run_id, ${times(['started_at', 'ended_at'])})
       FROM _pool_export.run_tasks t, range(1, ${RUNS + 1}) g(i) WHERE t.run_id = ${last}`,
    );
    await c.run(
      `INSERT INTO _pool_export.runs SELECT r.* REPLACE ('day-' || g.i AS run_id, ${times(['started_at', 'ended_at'])})
       FROM _pool_export.runs r, range(1, ${RUNS + 1}) g(i) WHERE r.run_id = ${last}`,
    );
  });
  const folders = { fresh: join(root, 'fresh'), whole: join(root, 'whole'), kept: join(root, 'kept') };
  cpSync(base, folders.fresh, { recursive: true });
  cpSync(grown, folders.whole, { recursive: true });
  cpSync(grown, folders.kept, { recursive: true });
  // A folder at a path its views file was not built for rebuilds that file (0.4-0.6 s on this data), which a follower's
  // folder, staying where it is, never pays: `migrate` (nothing to migrate here) builds each copy's views at its path.
  for (const data of Object.values(folders)) cliRun(env(data), ['migrate'], `migrate ${data}`);
  const lines = [
    `| ledger | run after 100 blocks | again after 100 more | task rows after | run_tasks as published |`,
    '|---|---|---|---|---|',
  ];
  const secs: Record<string, number[]> = { fresh: [], whole: [], kept: [] };
  for (let round = 0; round < 2; round++) {
    await sb.control('advance', { blocks: 100 });
    secs.fresh!.push(run('fresh', folders.fresh));
    secs.whole!.push(run('whole', folders.whole, ['--config', keepAll]));
    secs.kept!.push(run('kept', folders.kept));
  }
  const label = {
    fresh: 'as a backfill leaves it',
    whole: `a day of runs every 10 s (${RUNS} runs), kept whole`,
    kept: `the same, under the default keepRuns`,
  };
  for (const k of ['fresh', 'whole', 'kept'] as const) {
    const l = await ledger(folders[k]);
    lines.push(
      `| ${label[k]} | ${secs[k]![0]!.toFixed(1)} s | ${secs[k]![1]!.toFixed(1)} s | ${l.rows} | ${l.bytes < 1e6 ? `${(l.bytes / 1e3).toFixed(0)} kB` : `${(l.bytes / 1e6).toFixed(1)} MB`} |`,
    );
  }
  console.log(lines.join('\n'));
} finally {
  await sb.stop();
  rmSync(root, { recursive: true, force: true });
}
