/** The export core against the sandbox as a real process: exact copies after backfill, new blocks, reorgs and kills. */
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { KNOWN_CHAINS } from '../../src/sandbox/timeline.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse, nullNumbers } from '../support/export-check.ts';
import { allRows, waitForRequests } from '../support/sandbox-client.ts';

const CHAINS = KNOWN_CHAINS.map((c) => c.chainId);
let sb: SandboxProcess;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox(['--scale', '1200', '--burst', '1100']);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-'));
});
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Every Parquet file a reader can see (not under a temporary name). */
function visibleParquet(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root).flatMap((n) => {
    const p = join(root, n);
    if (n === '.tmp' || n.endsWith('.tmp')) return [];
    if (statSync(p).isDirectory()) return visibleParquet(p);
    return n.endsWith('.parquet') ? [p] : [];
  });
}

/** The warehouse opens, and every visible Parquet file reads whole. */
async function expectReadable(data: string, when: string): Promise<void> {
  if (!existsSync(join(data, 'warehouse.duckdb'))) return;
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    for (const f of visibleParquet(join(data, 'lake'))) {
      const n = await w.all(`SELECT count(*) AS n FROM read_parquet('${f}')`).catch((e: Error) => e);
      expect(n instanceof Error ? `${f}: ${n.message}` : 'ok', when).toBe('ok');
    }
  } finally {
    await w.close();
  }
}

/** The ids of the stored swaps and order histories per chain, in order: what a reorg of exported blocks rewrites. */
async function storedIds(data: string): Promise<Map<number, string[]>> {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    const rows = await w.all(
      'SELECT chain_id, id FROM (SELECT chain_id, id FROM dodoex.swaps UNION ALL SELECT chain_id, id FROM dodoex.order_histories) ORDER BY chain_id, id',
    );
    const out = new Map<number, string[]>();
    for (const r of rows) out.set(Number(r.chain_id), [...(out.get(Number(r.chain_id)) ?? []), String(r.id)]);
    return out;
  } finally {
    await w.close();
  }
}

/**
 * The whole first export of every chain, made once for the tests that start from it (a backfill of 8 chains is the
 * costliest step of this file): whichever of them runs first makes it, so that each also runs alone (`-t`). It is only
 * read: a test that runs the export on further copies it first.
 */
let everyChain: Promise<{ data: string; config: string }> | undefined;
function backfilledEveryChain(): Promise<{ data: string; config: string }> {
  everyChain ??= (async () => {
    const data = join(dir, 'main');
    // A re-read window of two days, so that a reorg deep enough to reach already-exported events stays inside it.
    const config = join(dir, 'main.json');
    writeFileSync(config, JSON.stringify({ reorgWindowSecs: 2 * 86_400 }));
    const first = await cli(['run', '--config', config], sandboxEnv(sb, data));
    expect(first.code, first.stderr + first.stdout).toBe(0);
    return { data, config };
  })();
  return everyChain;
}

/**
 * The chains that follow the backfill through new blocks and a reorg: the extremes of block time (ethereum's 12 s,
 * arbitrum's 1 s, so that one reorg depth reaches back a day on one and two hours on the other) and the chain id
 * beyond 32 bits (aurora). What an incremental run does is the same code for every chain; the backfill above proves
 * every chain's data once.
 */
const FOLLOWED = [1, 42161, 1313161554];
const FOLLOWED_NAMES = KNOWN_CHAINS.filter((c) => FOLLOWED.includes(c.chainId)).map((c) => c.name);

describe('export core', () => {
  it('copies every dataset of every chain exactly, typed numbers included, and the lake holds every row', async () => {
    const { data } = await backfilledEveryChain();
    const cmp = await compareWithSandbox(sb, data, CHAINS);
    expect(cmp.mismatches).toEqual([]);
    expect(cmp.checked).toBe(40 * CHAINS.length);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
  }, 300_000);

  it('stays exact through new blocks and a reorg that rewrites stored rows', async () => {
    // A copy of the shared backfill, which stays as it was made.
    const backfill = await backfilledEveryChain();
    const data = join(dir, 'followed');
    cpSync(backfill.data, data, { recursive: true });
    const env = sandboxEnv(sb, data);
    const run = () => cli(['run', '--config', backfill.config, '--chains', FOLLOWED_NAMES.join(',')], env);
    await sb.control('advance', { blocks: 700 });
    const second = await run();
    expect(second.code, second.stderr).toBe(0);
    let cmp = await compareWithSandbox(sb, data, FOLLOWED);
    expect(cmp.mismatches).toEqual([]);
    expect(cmp.checked).toBe(40 * FOLLOWED.length);

    // 7000 blocks: about a day on ethereum, two hours on arbitrum and aurora; events are sparse near the head, and
    // such a depth reaches stored ones on every chain (checked below, so that the test cannot pass by doing nothing).
    const before = await storedIds(data);
    await sb.control('advance', { blocks: 40 });
    await sb.control('reorg', { depth: 7000 });
    const third = await run();
    expect(third.code, third.stderr).toBe(0);
    const after = await storedIds(data);
    for (const chainId of FOLLOWED)
      expect(after.get(chainId), `stored events of chain ${chainId} after the reorg`).not.toEqual(before.get(chainId));
    cmp = await compareWithSandbox(sb, data, FOLLOWED);
    expect(cmp.mismatches).toEqual([]);
    expect(await nullNumbers(data)).toEqual([]);
  }, 240_000);

  it('reads through the gateway route when the config says so, exactly the same', async () => {
    const data = join(dir, 'gateway');
    const info = await sb.control<{ subgraphs: { chainId: number; schema: string; subgraphId: string }[] }>('info');
    const routes = Object.fromEntries(
      info.subgraphs
        .filter((s) => s.chainId === 43114)
        .map((s) => [`43114/${s.schema}`, { kind: 'gateway', subgraphId: s.subgraphId }]),
    );
    const config = join(dir, 'gateway.json');
    writeFileSync(config, JSON.stringify({ routes, gatewayUrl: sb.url }));
    await sb.control('stats', {});
    const r = await cli(
      ['run', '--chains', 'avax', '--config', config, '--jobs', 'events,state,token-mining'],
      sandboxEnv(sb, data),
    );
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const stats = await sb.control<{ byRoute: Record<string, number> }>('stats');
    expect(stats.byRoute).toEqual({ gateway: expect.any(Number) });
    // The gateway's deployment, like the real one, lacks three newer entities: their datasets are unavailable there.
    const cmp = await compareWithSandbox(sb, data, [43114]);
    expect(cmp.mismatches).toEqual([]);
    expect(cmp.unavailable.sort()).toEqual([
      'dodoex.dpp_oracle_admins@43114',
      'dodoex.pair_details@43114',
      'dodoex.positive_slippages@43114',
    ]);
    expect(r.stdout).toMatch(
      /^unavailable \(the upstream deployment has no such entity; skipped there, not a failure\): .*dodoex\.positive_slippages on avax/m,
    );
  }, 120_000);

  it("snapshots the liquidity list: every pool once, with the service's numbers", async () => {
    const data = join(dir, 'list');
    const r = await cli(['run', '--jobs', 'liquidity', '--chains', 'bsc,ethereum'], sandboxEnv(sb, data));
    expect(r.code, r.stderr).toBe(0);
    const w = await Warehouse.open(data, { readOnly: true });
    try {
      for (const chainId of [56, 1]) {
        const rows = await w.all(
          'SELECT id, tvl_text, base_reserve_text, type FROM list.liquidity WHERE chain_id = $1',
          [chainId],
        );
        const pairs = (await allRows(sb, chainId, 'dodoex', 'Pair')).filter((p) => p.type !== 'VIRTUAL');
        expect(rows.map((x) => x.id).sort()).toEqual(pairs.map((p) => p.id).sort());
        const byId = new Map(pairs.map((p) => [p.id, p]));
        for (const row of rows) expect(row.base_reserve_text).toBe(byId.get(row.id as string)!.baseReserve);
      }
    } finally {
      await w.close();
    }
  }, 60_000);

  it('when nothing is new, makes one request per route and one per liquidity list, reads no task, verifies nothing, stores no new list snapshot and writes no lake file; after new blocks, one batched request per route reads them, exact', async () => {
    const data = join(dir, 'noop');
    const env = sandboxEnv(sb, data);
    expect((await cli(['run', '--chains', 'ethereum,bsc'], env)).code).toBe(0);
    await sb.control('stats', {});
    const again = await cli(['run', '--chains', 'ethereum,bsc'], env);
    expect(again.code).toBe(0);
    const stats = await sb.control<{ requests: number; userAgents: Record<string, number> }>('stats');
    const event = (name: string) =>
      again.stderr
        .split('\n')
        .filter((l) => l.includes(`"event":"${name}"`))
        .map((l) => JSON.parse(l));
    // Counted by the sandbox: the head probe of each route (dodoex, token and mine on two chains), and the one page
    // of each chain's liquidity list, which has no block to compare.
    const routes = 3 * 2;
    const lists = 2;
    expect(stats.requests).toBe(routes + lists);
    expect(stats.userAgents['dodoex-dev42']).toBe(stats.requests);
    expect(event('task-unchanged')).toHaveLength(41 * 2 - lists);
    expect(event('verified')[0].requests).toBe(0);
    // The lists came back as stored: no new snapshot, so no lake file is written (the list's rows keep the first
    // run's id). Each chain still has its one snapshot, of the first run.
    expect(event('lake-written')[0].files).toBe(0);
    const w = await Warehouse.open(data, { readOnly: true });
    const snapshots = await w
      .all(
        'SELECT chain_id, count(DISTINCT _run_id) AS runs, count(*) > 0 AS rows FROM list.liquidity GROUP BY ALL ORDER BY 1',
      )
      .finally(() => w.close());
    expect(snapshots.map((r) => [Number(r.chain_id), Number(r.runs), r.rows])).toEqual([
      [1, 1, true],
      [56, 1, true],
    ]);
    // New blocks: the tasks read again, and the export is exact.
    await sb.control('advance', { blocks: 100 });
    await sb.control('stats', {});
    const moved = await cli(['run', '--chains', 'ethereum,bsc'], env);
    expect(moved.code, moved.stderr.slice(-1500)).toBe(0);
    // What is new, one request per route: the first page of every dataset of a deployment, and which rows of each
    // mutable dataset's window are still there, in one batched query (src/export/first-pages.ts). With the head probe
    // and the verification's request, at most 3 per route; no first page of 100 blocks is full.
    const batches = moved.stderr
      .split('\n')
      .filter((l) => l.includes('"event":"first-pages"'))
      .map((l) => JSON.parse(l) as { datasets: number; answered: number; requests: number });
    expect(batches).toHaveLength(routes);
    expect(batches.every((b) => b.answered === b.datasets && b.requests === 1)).toBe(true);
    expect(batches.reduce((n, b) => n + b.datasets, 0)).toBe(41 * 2 - lists);
    const movedRequests = (await sb.control<{ requests: number }>('stats')).requests;
    expect(movedRequests).toBeLessThanOrEqual(3 * (routes + lists));
    // The verification reads the counters of each route it verifies (dodoex and token on each chain) in one request,
    // and probes none: the run's own probes, moments before, told it each route's head and root fields.
    const verified = moved.stderr
      .split('\n')
      .filter((l) => l.includes('"event":"verified"'))
      .map((l) => JSON.parse(l) as { chains: number; groups: number; requests: number });
    expect(verified).toHaveLength(1);
    expect(verified[0]!.chains).toBe(2);
    expect(verified[0]!.groups).toBeGreaterThan(0);
    expect(verified[0]!.requests).toBe(2 * 2);
    // No task but the lists asked anything itself: the batches' requests are counted by the tasks they served.
    const tasks = moved.stderr
      .split('\n')
      .filter((l) => l.includes('"event":"task-done"'))
      .map((l) => JSON.parse(l) as { dataset: string; requests: number });
    expect(tasks.filter((t) => t.dataset !== 'list.liquidity').reduce((n, t) => n + t.requests, 0)).toBe(routes);
    expect((await compareWithSandbox(sb, data, [1, 56])).mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
  }, 180_000);

  /**
   * A run killed once the sandbox has served `n` of its requests (or ended before): it ended by the kill or well, and
   * left a readable warehouse and lake. Whether it was killed.
   */
  async function runKilledAfter(
    n: number,
    at: { data: string; env: Record<string, string>; chains: string[] },
  ): Promise<boolean> {
    await sb.control('stats', {});
    const r = await cli(['run', ...at.chains], at.env, { killWhen: waitForRequests(sb, n) });
    expect(
      r.signal === 'SIGKILL' || r.code === 0,
      `killed after ${n} requests; exit ${r.code}: ${r.stderr.slice(0, 1500)}`,
    ).toBe(true);
    await expectReadable(at.data, `after the kill after ${n} requests`);
    return r.signal === 'SIGKILL';
  }

  it('ends exact after 10 SIGKILLs of batched incremental runs, each at another of their requests', async () => {
    const data = join(dir, 'kill-batched');
    const env = sandboxEnv(sb, data);
    const chains = ['--chains', 'bsc'];
    expect((await cli(['run', ...chains], env)).code).toBe(0);
    let killed = 0;
    // An incremental run of one chain makes about ten requests (the probes, a batch per deployment, the list, the
    // verification): each run is killed once the sandbox has served the next number of them, so the kills fall
    // before, during and after the batches and the commits of what they brought.
    for (let n = 1; n <= 10; n++) {
      await sb.control('advance', { blocks: 20 });
      if (await runKilledAfter(n, { data, env, chains })) killed++;
    }
    expect(killed).toBeGreaterThanOrEqual(8);
    const final = await cli(['run', ...chains], env);
    expect(final.code, final.stderr).toBe(0);
    expect((await compareWithSandbox(sb, data, [56])).mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
  }, 300_000);

  it('ends exact, with a readable warehouse and lake after every one of 12 SIGKILLs at random points', async () => {
    const data = join(dir, 'kill');
    const env = sandboxEnv(sb, data);
    const chains = ['--chains', 'polygon,arbitrum'];
    // Kill points spread over a backfill by progress, not by the clock: each run is killed once the sandbox has served
    // a number of its requests, a different place within each run's slot of six (every run, even a resumed one, makes
    // more than 80). Fixed, so that a failure is seen again on the next run.
    const points = Array.from({ length: 12 }, (_, i) => 3 + i * 6 + ((i * 5) % 6));
    let killed = 0;
    for (const n of points) if (await runKilledAfter(n, { data, env, chains })) killed++;
    expect(killed, `kill points ${points.join(', ')}`).toBeGreaterThanOrEqual(10);
    const final = await cli(['run', ...chains], env);
    expect(final.code, final.stderr).toBe(0);
    const cmp = await compareWithSandbox(sb, data, [137, 42161]);
    expect(cmp.mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
  }, 600_000);

  it('splits a large first backfill of one dataset into shards fetched concurrently, each with its own checkpoint, merged exact', async () => {
    const data = join(dir, 'shards');
    const env = sandboxEnv(sb, data);
    const config = join(dir, 'shards.json');
    writeFileSync(
      config,
      JSON.stringify({ pageSize: 100, batchRows: 100, shards: 4, maxAttempts: 2, timeoutMs: 2000 }),
    );
    const args = ['run', '--chains', 'bsc', '--datasets', 'dodoex.swaps', '--config', config];
    await sb.control('faults', { latencyMs: 40 });
    await sb.control('stats', {});
    // Once a dozen requests went through, the upstream fails every request: the run stops half-way.
    const running = cli(args, env);
    await waitForRequests(sb, 12);
    await sb.control('faults', { faults: 'http500=1' });
    const stopped = await running;
    const stats = await sb.control<{ maxInFlight: number }>('stats');
    await sb.control('faults', { faults: '', latencyMs: 0 });
    expect(stopped.code, stopped.stdout).toBe(1);
    expect(stats.maxInFlight).toBeGreaterThanOrEqual(3);
    let w = await Warehouse.open(data, { readOnly: true });
    const shards = await w.all(
      "SELECT dataset || '#' || shard || '/' || shards AS dataset, cursor FROM _pool_export.shard_checkpoints WHERE chain_id = 56 ORDER BY shard",
    );
    const rows = await w.all('SELECT timestamp_text AS ts, id FROM dodoex.swaps WHERE chain_id = 56');
    await w.close();
    expect(shards.map((r) => r.dataset)).toEqual(
      ['dodoex.swaps#1/4', 'dodoex.swaps#2/4', 'dodoex.swaps#3/4', 'dodoex.swaps#4/4'].slice(0, shards.length),
    );
    expect(shards.length).toBeGreaterThanOrEqual(2);
    // Every stored row lies in a shard's range at or before that shard's checkpoint: nothing past a checkpoint is kept.
    const cursors = shards.map(
      (r) => JSON.parse(String(r.cursor)) as { lo: string; hi: string; seq?: string; id?: string },
    );
    for (const row of rows) {
      const ts = BigInt(String(row.ts));
      const c = cursors.find((x) => ts >= BigInt(x.lo) && ts < BigInt(x.hi));
      expect(c, `row ${String(row.id)} at ${ts} is in no started shard`).toBeDefined();
      expect(
        c!.seq !== undefined && (ts < BigInt(c!.seq) || (ts === BigInt(c!.seq) && String(row.id) <= c!.id!)),
        `row ${String(row.id)} past its shard's checkpoint`,
      ).toBe(true);
    }
    // A run killed before every shard committed once leaves some shards without a checkpoint: drop the first one's,
    // and the resumed run must rebuild it from the range the others record.
    w = await Warehouse.open(data);
    await w.exec("DELETE FROM _pool_export.shard_checkpoints WHERE dataset = 'dodoex.swaps' AND shard = 1");
    await w.close();
    const resumed = await cli(args, env);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    w = await Warehouse.open(data, { readOnly: true });
    const after = await w.all('SELECT dataset FROM _pool_export.checkpoints WHERE chain_id = 56');
    const shardsLeft = await w.all('SELECT * FROM _pool_export.shard_checkpoints');
    await w.close();
    expect(after.map((r) => r.dataset)).toEqual(['dodoex.swaps']);
    expect(shardsLeft).toEqual([]);
    expect((await compareWithSandbox(sb, data, [56], ['dodoex.swaps'])).mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
  }, 120_000);
});
