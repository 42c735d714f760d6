/**
 * The data folder the bad-input tests (test/integration/bad-input.int.test.ts) must leave untouched: a sandbox, a
 * folder exported from it, a digest of what it stores, and every bad command line with the exit code and message it
 * must get. `sb`, `dir`, `data` and `env` are live bindings.
 */

import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { qt } from '../../src/util/sql.ts';
import { cli, sandboxEnv } from './cli-process.ts';

export let sb: SandboxProcess;
export let dir: string;
export let data: string;
export let env: Record<string, string>;

/**
 * A digest of the stored data: the lake's Parquet files, the checkpoints, and every dataset table's ids. The run ledger
 * is left out on purpose: a run that fails at run time (a wrong key) is recorded there, and that is wanted.
 */
export async function stored(root: string): Promise<string> {
  const h = createHash('sha256');
  const walk = (d: string): void => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (n.endsWith('.parquet')) h.update(p).update(readFileSync(p));
    }
  };
  walk(join(root, 'lake'));
  const w = await Warehouse.open(root, { readOnly: true });
  try {
    h.update(
      JSON.stringify(await w.all('SELECT chain_id, dataset, cursor, block FROM _pool_export.checkpoints ORDER BY ALL')),
    );
    for (const ds of DATASETS)
      h.update(
        JSON.stringify(
          await w
            .all(`SELECT count(*) AS n, md5(coalesce(string_agg(id, ',' ORDER BY id), '')) AS ids FROM ${qt(ds.table)}`)
            .catch(() => 'missing'),
        ),
      );
  } finally {
    await w.close();
  }
  return h.digest('hex');
}

export const config = (content: string) => {
  const p = join(dir, `c-${createHash('md5').update(content).digest('hex')}.json`);
  writeFileSync(p, content);
  return p;
};

export type Case = [string, string[], Record<string, string>, number, RegExp];
export const cases = (): Case[] => [
  ['unknown command', ['nope'], {}, 2, /unknown command "nope" \(commands: run, schedule, /],
  ['a misspelt command', ['reprot', '--list'], {}, 2, /unknown command "reprot"; did you mean report\?/],
  [
    'status of a data folder that does not exist',
    ['status', '--offline', '--data-dir', '/nonexistent/pool-export'],
    {},
    2,
    /the data folder \/nonexistent\/pool-export does not exist, so nothing has been exported there; run `pool-export run`/,
  ],
  ['unknown flag', ['run', '--nope'], {}, 2, /Unknown argument: nope/],
  [
    'unknown chain',
    ['run', '--chains', 'mars'],
    {},
    2,
    /unknown chain "mars"; use a chain id or one of: ethereum, bsc/,
  ],
  ['unknown job', ['run', '--jobs', 'nope'], {}, 2, /unknown job "nope"; jobs: liquidity, events, state, token-mining/],
  [
    'unknown dataset',
    ['run', '--datasets', 'dodoex.nope'],
    {},
    2,
    /^pool-export: unknown dataset "dodoex\.nope" \(`pool-export datasets` lists them\)\n/,
  ],
  [
    'a misspelt dataset',
    ['run', '--datasets', 'dodoex.swapz'],
    {},
    2,
    /^pool-export: unknown dataset "dodoex\.swapz"; did you mean dodoex\.swaps\? \(`pool-export datasets` lists them\)\n/,
  ],
  ['negative --wait-lock', ['run', '--wait-lock', '-1'], {}, 2, /--wait-lock must be a number of seconds from 0/],
  ['bad --log-level', ['run', '--log-level', 'loud'], {}, 2, /log-level "loud" is not one of trace, /],
  ['bad --log-format', ['run', '--log-format', 'xml'], {}, 2, /log-format "xml" is not one of json, pretty/],
  [
    'missing config file',
    ['run', '--config', '/nonexistent.json'],
    {},
    2,
    /config file \/nonexistent\.json does not exist/,
  ],
  [
    'malformed config file',
    ['run', '--config', config('{"chains": [')],
    {},
    2,
    /is not valid JSON .*; fix it or pass another --config/,
  ],
  [
    'unknown config key',
    ['run', '--config', config('{"pagesize": 10}')],
    {},
    2,
    /unknown key "pagesize"; valid keys: .*pageSize/,
  ],
  [
    'page size over the limit',
    ['run', '--config', config('{"pageSize": 5000}')],
    {},
    2,
    /pageSize must be at most 1000/,
  ],
  [
    'zero concurrency',
    ['run', '--config', config('{"concurrency": 0}')],
    {},
    2,
    /concurrency must be a whole number of at least 1/,
  ],
  ['empty chain list', ['run', '--config', config('{"chains": []}')], {}, 2, /chains must be a non-empty list/],
  [
    'bad route',
    ['run', '--config', config('{"routes": {"56/dodoex": {"kind": "gateway"}}}')],
    {},
    2,
    /route "56\/dodoex" must be/,
  ],
  [
    'bad base URL',
    ['run'],
    { POOL_EXPORT_BASE_URL: 'ftp://example' },
    2,
    /POOL_EXPORT_BASE_URL\) must be an http\(s\) URL/,
  ],
  [
    'API key with a space',
    ['run'],
    { POOL_EXPORT_API_KEY: 'ab cd' },
    2,
    /POOL_EXPORT_API_KEY holds spaces or control characters/,
  ],
  ['no API key', ['run'], { POOL_EXPORT_API_KEY: '' }, 2, /no API key: set POOL_EXPORT_API_KEY/],
  [
    'wrong API key',
    ['run', '--chains', 'bsc', '--jobs', 'events'],
    { POOL_EXPORT_API_KEY: 'wrong-key-123' },
    1,
    /refused the API key .*401.*Invalid API key in request.*set POOL_EXPORT_API_KEY/,
  ],
  [
    'wrong API key: nothing verified, and said so',
    ['run', '--chains', 'bsc', '--jobs', 'events'],
    { POOL_EXPORT_API_KEY: 'wrong-key-123' },
    1,
    /^verification skipped: every task of this run failed \(15\), so it stored nothing to verify$/m,
  ],
  ['bad --stale-after', ['status', '--stale-after', 'soon'], {}, 2, /--stale-after takes a duration such as 90s/],
  ['status of an unknown chain', ['status', '--chains', 'mars'], {}, 2, /unknown chain "mars"/],
  [
    'unknown report',
    ['report', 'nope'],
    {},
    2,
    /unknown report "nope" \(`pool-export report --list` lists the reports: tvl_list/,
  ],
  ['a misspelt report', ['report', 'volum_daily'], {}, 2, /unknown report "volum_daily"; did you mean volume_daily\?/],
  ['a misspelt flag', ['run', '--chian', 'bsc'], {}, 2, /Unknown argument: chian; --chian: did you mean --chains\?/],
  [
    'bad --from',
    ['report', 'volume_daily', '--from', '2025-13-01'],
    {},
    2,
    /--from 2025-13-01 is not a day of the calendar/,
  ],
  [
    'a day not in the calendar',
    ['report', 'volume_daily', '--to', '2026-11-31'],
    {},
    2,
    /--to 2026-11-31 is not a day of the calendar/,
  ],
  [
    'a day that is no date',
    ['report', 'volume_daily', '--from', 'yesterday'],
    {},
    2,
    /--from takes a UTC day as YYYY-MM-DD/,
  ],
  [
    'a table that does not exist',
    ['query', 'SELECT * FROM dodoex.swap'],
    {},
    2,
    /^pool-export: the query is not valid SQL for the lake: Catalog Error: Table with name swap does not exist! Did you mean "swaps"\?\n$/,
  ],
  [
    'a value of the wrong type',
    ['query', "SELECT CAST('x' AS INTEGER)"],
    {},
    2,
    /^pool-export: the query is not valid SQL for the lake: Conversion Error: Could not convert string 'x' to INT32\n$/,
  ],
  ['bad --format', ['report', 'volume_daily', '--format', 'xml'], {}, 2, /format "xml" is not one of /],
  [
    'parquet without --out',
    ['report', 'volume_daily', '--format', 'parquet'],
    {},
    2,
    /--format parquet needs --out FILE/,
  ],
  ['a writing query', ['query', 'DELETE FROM dodoex.swaps'], {}, 2, /query takes one read-only SELECT statement/],
  [
    'two statements',
    ['query', 'SELECT 1; DROP TABLE dodoex.swaps'],
    {},
    2,
    /query takes one read-only SELECT statement, and it is not a SELECT/,
  ],
  [
    'two SELECT statements',
    ['query', 'SELECT 1; SELECT 2'],
    {},
    2,
    /query takes one SELECT statement, and this holds 2/,
  ],
  [
    'an UPDATE',
    ['query', 'UPDATE dodoex.swaps SET id = 1'],
    {},
    2,
    /query takes one read-only SELECT statement, and it is not a SELECT; for example: pool-export query "SELECT/,
  ],
  [
    'query with no SQL',
    ['query'],
    {},
    2,
    /query needs one SELECT statement, e\.g\. pool-export query "SELECT chain, count\(\*\) FROM dodoex\.swaps GROUP BY ALL"; `pool-export shell` opens a prompt/,
  ],
  [
    '--from after --to',
    ['report', 'volume_daily', '--from', '2026-01-02', '--to', '2026-01-01'],
    {},
    2,
    /--from 2026-01-02 is after --to 2026-01-01; the range would be empty/,
  ],
  [
    'a chain with no data',
    ['report', 'volume_daily', '--chains', 'bsc,999'],
    {},
    2,
    // 999 is not one of DODO's chains: it is named as The Graph's networks registry names it.
    /the lake holds no data of chain hyper-evm \(999\); its chains: bsc \(56\)/,
  ],
  [
    '--out into a missing folder',
    ['report', 'volume_daily', '--format', 'csv', '--out', '/nonexistent/x.csv'],
    {},
    2,
    /--out \/nonexistent\/x\.csv: the folder \/nonexistent does not exist; create it, or write somewhere else/,
  ],
  [
    'report of a data folder that is a file',
    ['report', 'volume_daily'],
    { POOL_EXPORT_DATA_DIR: join(dir, 'a-file') },
    2,
    /the data folder .*a-file is a file; point --data-dir/,
  ],
  [
    'report of a data folder with nothing exported',
    ['report', 'volume_daily'],
    { POOL_EXPORT_DATA_DIR: join(dir, 'empty-folder') },
    2,
    /nothing has been exported to .*empty-folder yet \(it has no lake\); run `pool-export run` there, or point --data-dir .* data\/demo after `make demo`/,
  ],
  [
    'dry run in a data folder that is a file',
    ['run', '--dry-run'],
    { POOL_EXPORT_DATA_DIR: join(dir, 'a-file') },
    2,
    /the data folder .*a-file is a file; choose another/,
  ],
  ['bad --limit', ['report', 'volume_daily', '--limit', '0'], {}, 2, /--limit takes a number of rows from 1, not 0/],
  [
    'unknown --columns',
    ['report', 'volume_daily', '--columns', 'day,nope'],
    {},
    2,
    /--columns names nope, which the result does not have; its columns: chain_id, day, pool/,
  ],
  ['invalid cron', ['schedule', '--schedule', 'events=bad'], {}, 2, /invalid cron expression "bad" for job events/],
  [
    'out-of-range cron field',
    ['schedule', '--schedule', 'events=*/5 25 * * *'],
    {},
    2,
    /invalid cron expression .* hour "25"/,
  ],
  [
    'schedule of an unselected job',
    ['schedule', '--jobs', 'events', '--schedule', 'state=0 * * * *'],
    {},
    2,
    /--schedule names job "state", which is not among the selected jobs/,
  ],
  ['schedule without cron', ['schedule', '--schedule', 'events'], {}, 2, /--schedule takes job=cron/],
  ['sandbox on a non-loopback address', ['sandbox', '--host', '10.0.0.1'], {}, 2, /--host must be a loopback address/],
  [
    'sandbox on a port in use',
    ['sandbox', '--port', new URL(sb.url).port],
    {},
    1,
    new RegExp(
      `port ${new URL(sb.url).port} on 127\\.0\\.0\\.1 is already in use by pid ${sb.child.pid} \\(.*pool-export\\.js sandbox .*\\): stop it \\(kill ${sb.child.pid}\\), or pass another --port \\(0 picks a free one\\)`,
    ),
  ],
  [
    'fault rate over 1',
    ['sandbox', '--faults', 'http500=2'],
    {},
    2,
    /fault rate for "http500" must be a number from 0 to 1/,
  ],
  [
    'unknown fault',
    ['sandbox', '--faults', 'bogus=0.1'],
    {},
    2,
    /unknown fault "bogus" in --faults; valid kinds: reset, timeout/,
  ],
  [
    'data folder in /proc',
    ['run', '--chains', 'bsc'],
    { POOL_EXPORT_DATA_DIR: '/proc/pool-export-data' },
    1,
    /the data folder \/proc\/pool-export-data cannot be created or written \(ENOENT\); choose another/,
  ],
  [
    'data folder under a file',
    ['run', '--chains', 'bsc'],
    { POOL_EXPORT_DATA_DIR: join(dir, 'a-file', 'data') },
    1,
    /the data folder .*a-file\/data cannot be created or written \(ENOTDIR\); choose another with --data-dir/,
  ],
];

/** A loopback port that nothing listens on (taken and given back). */

/** The sandbox and a folder exported from it, before the calling file's tests; both gone after them. */
export function useBadInputFolder(): void {
  beforeAll(async () => {
    sb = await startSandbox(['--scale', '200', '--chains', '56']);
    dir = mkdtempSync(join(tmpdir(), 'pool-export-bad-'));
    data = join(dir, 'data');
    env = sandboxEnv(sb, data);
    writeFileSync(join(dir, 'a-file'), 'not a folder');
    const r = await cli(['run', '--chains', 'bsc', '--jobs', 'events,liquidity'], env);
    if (r.code !== 0) throw new Error(r.stderr);
  });
  afterAll(async () => {
    await sb?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
}
