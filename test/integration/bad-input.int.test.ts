/** Bad input of every kind: a clear message naming the fix, exit 2 for usage and 1 for runtime errors, stored data untouched. */

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events } from '../../jobs/events.ts';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { lockDataDir } from '../../src/store/data-lock.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { qt } from '../../src/util/sql.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';
import { waitForRequests } from '../support/sandbox-client.ts';

let sb: SandboxProcess;
let dir: string;
let data: string;
let env: Record<string, string>;

/**
 * A digest of the stored data: the lake's Parquet files, the checkpoints, and every dataset table's ids. The run ledger
 * is left out on purpose: a run that fails at run time (a wrong key) is recorded there, and that is wanted.
 */
async function stored(root: string): Promise<string> {
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

const config = (content: string) => {
  const p = join(dir, `c-${createHash('md5').update(content).digest('hex')}.json`);
  writeFileSync(p, content);
  return p;
};

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

type Case = [string, string[], Record<string, string>, number, RegExp];
const cases = (): Case[] => [
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
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Root can mount a small tmpfs: a real file system that fills up. */
const canMount = process.getuid?.() === 0 && spawnSync('mount', ['--version']).status === 0;

/** Fills the file system holding `dir` to the last byte. */
function fill(dir: string): void {
  const fd = openSync(join(dir, 'filler'), 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  } finally {
    closeSync(fd);
  }
}

describe('bad input', () => {
  it('gets a clear message naming the fix and the right exit code, and stored data stay untouched', async () => {
    const before = await stored(data);
    const table = cases();
    expect(table.length).toBeGreaterThanOrEqual(30);
    for (const [name, args, extra, code, message] of table) {
      const r = await cli(args, { ...env, ...extra });
      expect(r.code, `${name}: ${r.stderr}`).toBe(code);
      expect(r.stderr + r.stdout, name).toMatch(message);
      expect(r.stderr + r.stdout, name).not.toContain(sb.apiKey);
    }
    expect(await stored(data)).toBe(before);
  }, 240_000);

  it('names chains one way in every command: --chains takes a list, --chain is the same option', async () => {
    // The rows' keys: the last digits of a sum of doubles may differ from one parallel run to the next.
    const keys = async (chains: string[]) => {
      const r = await cli(['report', 'tvl_list', '--format', 'json', ...chains], env);
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { chain_id: number; pool: string; time: string }[]).map(
        (x) => `${x.chain_id} ${x.pool} ${x.time}`,
      );
    };
    const list = await keys(['--chains', 'bsc,56']);
    expect(list.length).toBeGreaterThan(2);
    expect(await keys(['--chain', 'bsc'])).toEqual(list);
    expect(await keys([])).toEqual(list);
    for (const args of [
      ['run', '--chain', 'mars'],
      ['status', '--chain', 'mars'],
      ['dashboard', '--chain', 'mars', '--out', join(dir, 'x.html')],
      ['schema', 'check', '--chain', 'mars'],
    ]) {
      const r = await cli(args, env);
      expect([r.code, r.stderr], args.join(' ')).toEqual([2, expect.stringMatching(/unknown chain "mars"/)]);
    }
  });

  it.runIf(canMount)(
    'a full disk: a clear message naming the folder and the fix, exit 1, stored data untouched; exact once space is freed',
    async () => {
      const disk = join(dir, 'disk');
      mkdirSync(disk);
      const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', disk], { encoding: 'utf8' });
      expect(mounted.status, mounted.stderr).toBe(0);
      try {
        const small = join(disk, 'data');
        const envSmall = sandboxEnv(sb, small);
        // With DuckDB's memory capped (the default), a run first asks for 1 GiB to spill to, and stops before starting.
        const refused = await cli(['run', '--chains', 'bsc', '--jobs', 'events'], envSmall);
        expect(refused.code, refused.stdout + refused.stderr).toBe(1);
        expect(refused.stdout + refused.stderr).toMatch(
          new RegExp(
            `the data folder ${small} has \\d+ (KiB|MiB) free; a run needs at least 1024 MiB there, since DuckDB writes what does not fit in duckdbMemoryLimit \\(2048MiB\\) to that disk`,
          ),
        );
        expect(existsSync(join(small, 'warehouse.duckdb'))).toBe(false);
        // The rest of this test fills the disk during a run: DuckDB uncapped, so the space check does not stop it.
        const uncapped = join(dir, 'uncapped.json');
        writeFileSync(uncapped, JSON.stringify({ duckdbMemoryLimit: '' }));
        const args = ['run', '--chains', 'bsc', '--jobs', 'events', '--config', uncapped];
        const first = await cli(args, envSmall);
        expect(
          first.code,
          first.stdout +
            first.stderr
              .split('\n')
              .filter((l) => !l.startsWith('{'))
              .join('\n'),
        ).toBe(0);
        await sb.control('advance', { blocks: 400 });
        fill(disk);
        const before = await stored(small);
        for (const attempt of [1, 2]) {
          const r = await cli(args, envSmall);
          expect(r.code, `attempt ${attempt}: ${r.stdout}${r.stderr}`).toBe(1);
          expect(r.stdout + r.stderr).toMatch(
            new RegExp(
              `the disk holding the data folder ${small} is full \\(.*(ENOSPC|No space left on device).*\\); free space there, or point --data-dir at a folder on another disk, and run again`,
            ),
          );
          expect(await stored(small)).toBe(before);
          // No half-written file is left: no batch files, no views file under construction, no empty lock owner.
          expect(readdirSync(join(small, '.tmp'))).toEqual([]);
          expect(
            readdirSync(small).filter((n) => n !== '.tmp' && (n.endsWith('.tmp') || n.startsWith('.lock'))),
          ).toEqual([]);
        }
        rmSync(join(disk, 'filler'));
        const r = await cli(args, envSmall);
        expect(r.code, r.stdout + r.stderr).toBe(0);
        expect((await compareWithSandbox(sb, small, [56], events.datasets)).mismatches).toEqual([]);
        expect(await lakeBehindWarehouse(small)).toEqual([]);
      } finally {
        spawnSync('umount', [disk]);
      }
    },
    180_000,
  );

  it('an unreachable upstream fails within a few attempts, with one line for all of its tasks, and retries logged', async () => {
    const before = await stored(data);
    const port = await closedPort();
    const r = await cli(['run', '--chains', 'bsc', '--jobs', 'events'], {
      ...env,
      POOL_EXPORT_BASE_URL: `http://127.0.0.1:${port}`,
    });
    expect(r.code).toBe(1);
    expect(r.stdout.match(/^FAILED .*$/gm)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^FAILED \\d+ tasks \\(\\d+ datasets on bsc\\): the upstream host 127\\.0\\.0\\.1:${port} could not be reached \\(.*ECONNREFUSED.*\\): check the address, the network and any proxy \\(gave up after 3 attempts\\)$`,
        ),
      ),
    ]);
    // One host, asked once: three attempts (two retries, each logged), never one per endpoint.
    expect(r.stderr.match(/"event":"retry"/g)).toHaveLength(2);
    expect(r.stderr.match(/"event":"host-unreachable"/g)).toHaveLength(1);
    expect(await stored(data)).toBe(before);
  });

  it('tables and status fit 80 columns, with numbers for reading; csv stays exact', async () => {
    const narrow = { ...env, COLUMNS: '80' };
    for (const args of [
      ['report', 'volume_daily'],
      ['report', 'top_pools'],
      ['query', 'SELECT * FROM reports.apy'],
      ['status', '--offline', '--stale-after', '10000d'],
      ['verify', '--chains', 'bsc'],
    ]) {
      const r = await cli(args, narrow);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      const wide = r.stdout.split('\n').filter((l) => [...l].length > 80);
      expect(wide, args.join(' ')).toEqual([]);
      expect(r.stdout, args.join(' ')).not.toMatch(/\d\.\d{9,}|e-\d{2,}\d/);
    }
    // verify's table leaves its identity column out at 80 columns, and says where it is.
    const verified = await cli(['verify', '--chains', 'bsc'], narrow);
    expect(verified.stdout).toMatch(/^chain +dataset +block +days +groups +differ$/m);
    expect(verified.stdout).toMatch(
      /^\(each dataset's identity: `verify --format json`, or a terminal of \d+ columns\)$/m,
    );
    const wideVerify = await cli(['verify', '--chains', 'bsc'], { ...env, COLUMNS: '200' });
    expect(wideVerify.stdout).toMatch(/^chain +dataset +identity +block +days +groups +differ$/m);
    // A report shows its own most important columns first, then says which it left out and how to see them.
    const top = await cli(['report', 'top_pools', '--limit', '5'], narrow);
    expect(top.stdout.split('\n')[0]).toMatch(/^chain_id +rank +base_token_symbol +quote_token_symbol +tvl_usd\b/);
    expect(top.stdout.replace(/\s+/g, ' ')).toMatch(
      /\(\d+ more columns: [^)]*\bpool\b[^)]*; --wide shows them all, --columns chooses, --format csv gives them exactly\)/,
    );
    const all = await cli(['report', 'top_pools', '--limit', '5', '--wide'], narrow);
    expect(all.stdout.split('\n')[0]).toMatch(/\btvl_service_usd\b.*\bpool\b.*\bday\b.*\bmining_base_apy$/);
    expect(all.stdout).not.toMatch(/more columns/);
    const table = await cli(['report', 'volume_daily', '--columns', 'day,pool,volume_usd'], narrow);
    expect(table.stdout).toMatch(/^day +pool +volume_usd$/m);
    expect(table.stdout).toMatch(/\d(\.\d+)?[KMBT]?$/m);
    const csv = await cli(
      [
        'query',
        'SELECT amount_in, _exact.amount_in AS amount_in_text FROM dodoex.swaps ORDER BY id LIMIT 20',
        '--format',
        'csv',
      ],
      narrow,
    );
    for (const line of csv.stdout.trim().split('\n').slice(1)) {
      const [number, text] = line.split(',');
      expect(Number(number)).toBe(Number(text));
    }
  });

  it('status names datasets that were never exported, and answers during a run', async () => {
    const never = await cli(['status', '--offline', '--datasets', 'dodoex.swaps,token.tokens', '--chains', 'bsc'], env);
    expect(never.code).toBe(3);
    expect(never.stdout).toMatch(/^token\.tokens +bsc +0 +- +never +STALE$/m);
    expect(never.stdout).toMatch(/^lag is measured against the clock: asked not to \(--offline\)$/m);
    await sb.control('faults', { latencyMs: 200 });
    await sb.control('stats', {});
    const running = cli(['run', '--chains', 'bsc', '--jobs', 'state', '--wait-lock', '60'], env);
    await waitForRequests(sb, 4);
    const during = await cli(['status', '--offline', '--json', '--stale-after', '10000d'], env);
    await sb.control('faults', { latencyMs: 0 });
    expect((await running).code).toBe(0);
    expect(during.code, during.stderr).toBe(0);
    const report = JSON.parse(during.stdout) as { running: { pid: number } | null; datasets: unknown[] };
    expect(report.running?.pid).toBeGreaterThan(0);
    expect(report.datasets.length).toBeGreaterThan(5);
  }, 120_000);

  it('a dry run writes nothing, not even a data folder, and shows no key where none is set', async () => {
    const fresh = join(dir, 'dry-run-folder');
    const r = await cli(['run', '--dry-run', '--chains', 'bsc', '--datasets', 'dodoex.swaps,list.liquidity'], {
      ...env,
      POOL_EXPORT_DATA_DIR: fresh,
      POOL_EXPORT_API_KEY: '',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^plan: 2 tasks, data folder .*dry-run-folder \(nothing exported there yet\)$/m);
    expect(r.stdout).toContain("no API key is set: DODO's tasks need POOL_EXPORT_API_KEY");
    expect(r.stdout).not.toContain('apikey=');
    expect(r.stdout).toMatch(
      /dodoex\.swaps +bsc +event +http:\/\/127\.0\.0\.1:\d+\/subgraph\/graphql\?chainId=56&schemaName=dodoex +cursor \(start of history\)/,
    );
    expect(existsSync(fresh)).toBe(false);
    // With a warehouse, the cursors are read without writing to it.
    const before = await stored(data);
    const again = await cli(['run', '--dry-run', '--chains', 'bsc', '--datasets', 'dodoex.swaps'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(
      /dodoex\.swaps +bsc +event +.*apikey=\*\*\* {2}cursor \{"seq":"\d+","id":"0x[0-9a-f-]+","block":\d+\}/,
    );
    expect(await stored(data)).toBe(before);
  });

  it('stops at once when another process holds the data folder, naming it, and touches nothing', async () => {
    const before = await stored(data);
    const lock = await lockDataDir(data, { what: 'a test holding the folder', waitSecs: 0, onLost: () => undefined });
    try {
      const r = await cli(['run', '--chains', 'bsc'], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        new RegExp(`in use by another pool-export process \\(pid ${process.pid}, a test holding the folder, since `),
      );
    } finally {
      await lock.release();
    }
    expect(await stored(data)).toBe(before);
  }, 60_000);
});
