/** The export under upstream faults: exact after retries, and a clear stop with a safe checkpoint when faults persist. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events } from '../../jobs/events.ts';
import { openLakeDb } from '../../src/reports/views.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';
import { allRows, waitForRequests } from '../support/sandbox-client.ts';

let sb: SandboxProcess;
let dir: string;
let config: string;
beforeAll(async () => {
  sb = await startSandbox(['--scale', '1500', '--chains', '56', '--fault-seed', '11']);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-faults-'));
  // Short time-outs so that held requests cost seconds, not minutes; small pages so that there are many requests.
  config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ timeoutMs: 1500, pageSize: 200, maxAttempts: 10 }));
});
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function filesUnder(root: string): string[] {
  return readdirSync(root).flatMap((n) =>
    statSync(join(root, n)).isDirectory() ? filesUnder(join(root, n)) : [join(root, n)],
  );
}

describe('upstream faults', () => {
  it('keeps to a rate limit it is not told: after the first 429s, the sandbox sees few more', async () => {
    const data = join(dir, 'paced');
    // Small pages: enough requests that the first second's burst of 429s (before any pace is known) weighs little.
    const paced = join(dir, 'paced.json');
    writeFileSync(paced, JSON.stringify({ timeoutMs: 1500, pageSize: 50, maxAttempts: 10 }));
    await sb.control('stats', {});
    await sb.control('faults', { rateLimit: 8 });
    let r: Awaited<ReturnType<typeof cli>>;
    try {
      r = await cli(['run', '--chains', 'bsc', '--jobs', 'events', '--config', paced], sandboxEnv(sb, data));
    } finally {
      await sb.control('faults', { rateLimit: 0 });
    }
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const stats = await sb.control<{ requests: number; rateLimited: number }>('stats');
    // The governor learns the pace from the first 429s: about 13% of requests were refused here (the first second's
    // burst), against about half with the governor unhooked from the client.
    expect(stats.requests).toBeGreaterThan(200);
    expect(stats.rateLimited).toBeGreaterThan(0);
    expect(
      stats.rateLimited / stats.requests,
      `${stats.rateLimited} of ${stats.requests} requests refused`,
    ).toBeLessThan(0.25);
    expect((await compareWithSandbox(sb, data, [56], events.datasets)).mismatches).toEqual([]);
  }, 180_000);

  it('halves the page size after a time-out: the sandbox is sent the configured size once, then smaller pages', async () => {
    const data = join(dir, 'halved');
    // The sandbox takes 3 ms per row asked, as an indexer takes longer over a larger page: a page of 400 rows answers
    // in 1.2 s, past the 1 s time-out, one of 200 in 0.6 s. Only a smaller page can get through.
    const halving = join(dir, 'halving.json');
    writeFileSync(halving, JSON.stringify({ timeoutMs: 1000, pageSize: 400, maxAttempts: 3, shards: 1 }));
    await sb.control('stats', {});
    await sb.control('faults', { latencyPerRowMs: 3 });
    let r: Awaited<ReturnType<typeof cli>>;
    try {
      r = await cli(
        ['run', '--chains', 'bsc', '--datasets', 'dodoex.swaps', '--config', halving],
        sandboxEnv(sb, data),
      );
    } finally {
      await sb.control('faults', { latencyPerRowMs: 0 });
    }
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const { pageSizes } = await sb.control<{ pageSizes: Record<string, number> }>('stats');
    // 400 once (the page size never grows back), then halves of it; a busy machine may halve once more.
    expect(pageSizes['400'], JSON.stringify(pageSizes)).toBe(1);
    expect(Object.keys(pageSizes).sort()).toEqual(expect.arrayContaining(['200']));
    for (const size of Object.keys(pageSizes)) expect(['400', '200', '100', '50']).toContain(size);
    expect((await compareWithSandbox(sb, data, [56], ['dodoex.swaps'])).mismatches).toEqual([]);
  }, 180_000);

  it('completes a backfill exactly through 500s, time-outs, truncated bodies, resets, GraphQL errors and 429 bursts', async () => {
    const data = join(dir, 'ok');
    await sb.control('faults', {
      faults: 'http500=0.05,timeout=0.02,truncate=0.01,reset=0.01,graphql=0.01,burst429=0.01',
    });
    await sb.control('stats', {});
    const r = await cli(['run', '--chains', 'bsc', '--jobs', 'events', '--config', config], sandboxEnv(sb, data));
    const stats = await sb.control<{ faults: Record<string, number>; requests: number }>('stats');
    await sb.control('faults', { faults: '' });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const injected = Object.values(stats.faults).reduce((a, b) => a + b, 0);
    expect(injected).toBeGreaterThan(5);
    expect(Object.keys(stats.faults).length).toBeGreaterThanOrEqual(4);
    const retries = Number(/(\d+) retries/.exec(r.stdout)![1]);
    expect(retries).toBeGreaterThanOrEqual(injected - 8);
    expect((await compareWithSandbox(sb, data, [56], events.datasets)).mismatches).toEqual([]);
    for (const f of filesUnder(data)) expect(readFileSync(f).includes(Buffer.from(sb.apiKey)), f).toBe(false);
    expect(r.stdout + r.stderr).not.toContain(sb.apiKey);
  }, 240_000);

  it('stops a task with a clear error when the upstream keeps failing, with its checkpoint at the last good batch', async () => {
    const data = join(dir, 'down');
    const env = sandboxEnv(sb, data);
    const perPage = join(dir, 'per-page.json');
    // One shard: this test is about the dataset's own checkpoint (sharded backfills are tested in export.int.test.ts).
    writeFileSync(
      perPage,
      JSON.stringify({ timeoutMs: 1500, pageSize: 100, batchRows: 100, maxAttempts: 3, shards: 1 }),
    );
    await sb.control('faults', { latencyMs: 60 });
    await sb.control('stats', {});
    const running = cli(['run', '--chains', 'bsc', '--datasets', 'dodoex.swaps', '--config', perPage], env);
    // The upstream goes down once a few pages went through, however slow the machine is.
    await waitForRequests(sb, 6);
    await sb.control('faults', { faults: 'http500=1' });
    const r = await running;
    await sb.control('faults', { faults: '', latencyMs: 0 });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /FAILED dodoex\.swaps on bsc: HTTP 500: Internal Server Error from http:\/\/127\.0\.0\.1:\d+\/subgraph\/graphql\?chainId=56&schemaName=dodoex&apikey=\*\*\* \(gave up after 3 attempts\)/,
    );
    expect(r.stdout + r.stderr).not.toContain(sb.apiKey);
    const w = await Warehouse.open(data, { readOnly: true });
    const cp = JSON.parse(
      String((await w.all("SELECT cursor FROM _pool_export.checkpoints WHERE dataset = 'dodoex.swaps'"))[0]!.cursor),
    ) as { seq: string; id: string };
    const rows = await w.all('SELECT timestamp_text AS ts, id FROM dodoex.swaps');
    await w.close();
    // Every committed row is at or before the checkpoint, and the checkpoint is the last committed row.
    const key = (x: Record<string, unknown>) => [BigInt(String(x.ts)), String(x.id)] as const;
    const after = rows.filter((x) => {
      const [t, i] = key(x);
      return t > BigInt(cp.seq) || (t === BigInt(cp.seq) && i > cp.id);
    });
    expect(rows.length).toBeGreaterThan(0);
    expect(after).toEqual([]);
    expect(rows.some((x) => String(x.id) === cp.id)).toBe(true);
    expect((await cli(['run', '--chains', 'bsc', '--datasets', 'dodoex.swaps', '--config', config], env)).code).toBe(0);
    expect((await compareWithSandbox(sb, data, [56], ['dodoex.swaps'])).mismatches).toEqual([]);
    // The rows the failed run committed reached the lake too, with the re-run's.
    expect(await lakeBehindWarehouse(data)).toEqual([]);
  }, 240_000);

  it('stores token symbols holding SQL, quotes and emoji verbatim, and the API key is nowhere: logs, errors, DuckDB or Parquet', async () => {
    const data = join(dir, 'secrets');
    const env = sandboxEnv(sb, data);
    await sb.control('faults', { faults: 'http500=0.05,truncate=0.02,graphql=0.02,reset=0.02' });
    const failFast = join(dir, 'fail-fast.json');
    writeFileSync(failFast, JSON.stringify({ timeoutMs: 1500, maxAttempts: 2 }));
    const runs = [
      await cli(
        [
          'run',
          '--chains',
          'bsc',
          '--datasets',
          'dodoex.tokens,dodoex.pairs,token.tokens,list.liquidity',
          '--config',
          config,
          '--log-level',
          'debug',
        ],
        env,
      ),
      // Failing runs too: a key the upstream refuses, and an upstream that is down.
      await cli(['run', '--chains', 'bsc', '--datasets', 'dodoex.swaps', '--config', failFast], {
        ...env,
        POOL_EXPORT_API_KEY: 'ffffffffffffffffffffffffffffffff',
      }),
      await cli(['run', '--chains', 'bsc', '--datasets', 'dodoex.swaps', '--config', failFast], {
        ...env,
        POOL_EXPORT_BASE_URL: 'http://127.0.0.1:9',
      }),
    ];
    await sb.control('faults', { faults: '' });
    expect(runs.map((r) => r.code)).toEqual([0, 1, 1]);
    for (const r of runs) expect(r.stdout + r.stderr).not.toContain(sb.apiKey);
    const files = filesUnder(data);
    expect(files.some((f) => f.endsWith('.parquet'))).toBe(true);
    for (const f of files) expect(readFileSync(f).includes(Buffer.from(sb.apiKey)), f).toBe(false);

    const upstream = new Map((await allRows(sb, 56, 'dodoex', 'Token')).map((t) => [String(t.id), String(t.symbol)]));
    const hostile = [...upstream.values()].filter((s) => /['";]|DROP TABLE|[^\x00-\x7f]/.test(s));
    expect(hostile.length).toBeGreaterThan(0);
    const w = await Warehouse.open(data, { readOnly: true });
    const lake = await openLakeDb(data);
    try {
      const inWarehouse = new Map(
        (await w.all('SELECT id, symbol FROM dodoex.tokens')).map((r) => [String(r.id), String(r.symbol)]),
      );
      const inLake = new Map(
        (await lake.conn.runAndReadAll('SELECT id, symbol FROM dodoex.tokens'))
          .getRowObjectsJson()
          .map((r) => [String(r.id), String(r.symbol)]),
      );
      expect(inWarehouse).toEqual(upstream);
      expect(inLake).toEqual(upstream);
    } finally {
      lake.close();
      await w.close();
    }
  }, 240_000);
});
