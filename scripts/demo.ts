/**
 * `make demo`: starts the sandbox, exports every job for every chain into ./data/demo, runs again (only new data is
 * fetched), prints a summary of rows per dataset, then a few reports from the Parquet lake, and writes the dashboard
 * (data/demo/dashboard.html).
 */
import { spawnSync } from 'node:child_process';
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
try {
  rmSync(dataDir, { recursive: true, force: true });
  for (const [label, before] of [
    ['first run: full history', undefined],
    ['second run, after 50 new blocks: only new data', 50],
  ] as const) {
    if (before) await sandbox.control('advance', { blocks: before });
    await sandbox.control('stats', {});
    const t = performance.now();
    const r = spawnSync(process.execPath, [BIN, 'run'], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
    });
    const secs = ((performance.now() - t) / 1000).toFixed(1);
    const served = (await sandbox.control<{ requests: number }>('stats')).requests;
    const lines = r.stdout.trim().split('\n');
    console.log(`\n== ${label} (${secs} s, ${served} requests served by the sandbox)`);
    console.log(before ? lines.slice(-4).join('\n') : lines.join('\n'));
    if (r.status !== 0) status = r.status ?? 1;
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
    const r = spawnSync(process.execPath, [BIN, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
    });
    console.log(`\n== ${title}\n${r.stdout.trimEnd()}`);
    if (r.status !== 0) status = r.status ?? 1;
  }
  // The dashboard: one HTML file with the charts, read from the lake like the reports.
  const dash = spawnSync(process.execPath, [BIN, 'dashboard', '--out', `${dataDir}/dashboard.html`], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  console.log(`\n== dashboard: TVL, volume, APY and freshness as charts\n${dash.stdout.trimEnd()}`);
  if (dash.status !== 0) status = dash.status ?? 1;
  console.log(
    `\nwarehouse: ${dataDir}/warehouse.duckdb; Parquet lake: ${dataDir}/lake; views for DuckDB sessions: ${dataDir}/lake.duckdb; dashboard: ${dataDir}/dashboard.html`,
  );
  console.log(
    'more: npx pool-export report --list, then e.g. POOL_EXPORT_DATA_DIR=data/demo npx pool-export report volume_daily --chain bsc',
  );
} finally {
  await sandbox.stop();
}
process.exit(status);
