/**
 * `make demo`: starts the sandbox, exports every job for every chain into ./data/demo, runs again (only new data is
 * fetched), prints a summary of rows per dataset, verifies bsc's rows against the sandbox's counters, then a few
 * reports from the Parquet lake, and writes the dashboard (data/demo/dashboard.html).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { BIN, startSandbox } from '../src/sandbox/spawn.ts';

/** Swaps per chain in the demo's generated history. */
const DEMO_SCALE = '5000';
const dataDir = resolve('data/demo');

// History ends now, so that the export is fresh: `status` afterwards reports no lag beyond minutes.
const now = new Date();
const sandbox = await startSandbox(['--scale', DEMO_SCALE, '--now', now.toISOString()]);
console.log(`sandbox upstream: ${sandbox.url} (scale ${DEMO_SCALE} swaps per chain, 8 chains)`);
const env = {
  ...process.env,
  POOL_EXPORT_API_KEY: sandbox.apiKey,
  POOL_EXPORT_BASE_URL: sandbox.url,
  POOL_EXPORT_DATA_DIR: dataDir,
  POOL_EXPORT_DEVELOPER_ID: 'demo',
};
let status = 0;

/**
 * Ctrl-C reaches every process of the demo from the terminal (one process group): the run stops as it documents, and
 * the demo waits for it, then ends by the same signal instead of leaving the run behind. A SIGTERM sent to the demo
 * alone is passed on to the command it is running.
 */
let stoppedBy: NodeJS.Signals | undefined;
let current: ChildProcess | undefined;
process.on('SIGINT', () => {
  stoppedBy ??= 'SIGINT';
});
process.on('SIGTERM', () => {
  stoppedBy ??= 'SIGTERM';
  current?.kill('SIGTERM');
});

/** The demo ends early: it was asked to stop. */
class Stopped extends Error {}

/** Runs the CLI with its output captured and its errors on the terminal. */
function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string }> {
  if (stoppedBy) return Promise.reject(new Stopped());
  return new Promise((resolve, reject) => {
    // A run's summary is captured, then shown on the demo's terminal: the run is told that terminal's width, so that
    // its prose wraps at words. (The reports' tables are shown whole, as a file would hold them.)
    const columns =
      process.stdout.isTTY && (args[0] === 'run' || args[0] === 'verify')
        ? { COLUMNS: String(process.stdout.columns) }
        : {};
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...env, ...columns },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    current = child;
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.on('close', (code) => {
      current = undefined;
      // A stopped run has said what it kept.
      if (stoppedBy) {
        process.stdout.write(stdout);
        reject(new Stopped());
      } else resolve({ code, stdout });
    });
  });
}

try {
  rmSync(dataDir, { recursive: true, force: true });
  for (const [label, before] of [
    ['first run: full history', undefined],
    ['second run, after 50 new blocks: only new data', 50],
  ] as const) {
    if (before) await sandbox.control('advance', { blocks: before });
    await sandbox.control('stats', {});
    const t = performance.now();
    const r = await run(['run'], env);
    const secs = ((performance.now() - t) / 1000).toFixed(1);
    const served = (await sandbox.control<{ requests: number }>('stats')).requests;
    console.log(`\n== ${label} (${secs} s, ${served} requests served by the sandbox)`);
    // The second run's table has only the datasets with new rows, under its header.
    console.log(r.stdout.trimEnd());
    if (r.code !== 0) status = r.code ?? 1;
  }
  // verify needs the upstream, which is the demo's sandbox: it runs here, while the sandbox serves (one chain, to keep
  // the output short; `npx pool-export verify` checks every chain of the config).
  {
    const v = await run(['verify', '--chains', 'bsc'], env);
    console.log(
      `\n== verify: bsc's stored rows against the upstream's own counters, then its lake against the warehouse\n${v.stdout.trimEnd()}`,
    );
    if (v.code !== 0) status = v.code ?? 1;
  }
  // Reports, read from the Parquet lake through DuckDB views.
  const reports: [string, string[]][] = [
    [
      "top pools on bsc by tracked TVL (trusted prices only), the service's figure beside it",
      [
        'query',
        'SELECT rank, pool, pool_type, base_token_symbol AS base, quote_token_symbol AS quote, round(tvl_usd, 2) AS tvl_usd, round(tvl_service_usd, 2) AS service_tvl_usd, round(transaction_base_apy, 6) AS apy FROM reports.top_pools WHERE chain_id = 56 AND rank <= 5 ORDER BY rank',
      ],
    ],
    [
      'tracked TVL by chain and pool type (latest snapshot)',
      [
        'query',
        'SELECT chain_id, pool_type, pools, round(tvl_usd, 2) AS tvl_usd FROM reports.tvl_by_chain_type ORDER BY chain_id, pool_type LIMIT 12',
      ],
    ],
    [
      'pools whose untracked or service TVL is over 10 times the tracked one',
      [
        'query',
        'SELECT chain_id, pool, round(tvl_usd, 2) AS tracked_usd, round(tvl_untracked_usd, 2) AS untracked_usd, suspect_symbol, suspect_price_usd FROM reports.suspicious_pools ORDER BY tvl_untracked_usd DESC LIMIT 5',
      ],
    ],
    [
      'smart-route volume, last 5 days on ethereum',
      [
        'report',
        'smart_route_volume',
        '--chain',
        'ethereum',
        '--from',
        new Date(now.getTime() - 4 * 86_400_000).toISOString().slice(0, 10),
      ],
    ],
  ];
  for (const [title, args] of reports) {
    const r = await run(args, env);
    console.log(`\n== ${title}\n${r.stdout.trimEnd()}`);
    if (r.code !== 0) status = r.code ?? 1;
  }
  // The dashboard: one HTML file with the charts, read from the lake like the reports.
  const dash = await run(['dashboard', '--out', `${dataDir}/dashboard.html`], env);
  console.log(`\n== dashboard: TVL, volume, APY and freshness as charts\n${dash.stdout.trimEnd()}`);
  if (dash.code !== 0) status = dash.code ?? 1;
  console.log(
    `\nwarehouse: ${dataDir}/warehouse.duckdb; Parquet lake: ${dataDir}/lake; views for DuckDB sessions: ${dataDir}/views.duckdb; dashboard: ${dataDir}/dashboard.html`,
  );
  console.log(
    'more: npx pool-export report --list, then e.g. POOL_EXPORT_DATA_DIR=data/demo npx pool-export report volume_daily --chain bsc',
  );
} catch (e) {
  // Once stopped, whatever failed after (the sandbox, which got the Ctrl-C too) does not matter.
  if (!stoppedBy) throw e;
} finally {
  await sandbox.stop();
}
// Stopped by a signal: the demo ends by it too, as the run did (130 for Ctrl-C, as a shell reports it).
if (stoppedBy) {
  process.removeAllListeners(stoppedBy);
  process.kill(process.pid, stoppedBy);
} else process.exit(status);
