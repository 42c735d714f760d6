/**
 * Several routes for one chain and schema, against real sandbox processes that serve the same world (same seed, same
 * pinned time): one lagging 500 blocks, one reporting indexing errors and then recovering, one on another fork.
 * Each run is checked exact against the rows of the route that served it (count, digest, typed columns), and the
 * ledger's record of the route is read back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOBS } from '../../jobs/index.ts';
import { loadConfig } from '../../src/config/config.ts';
import { buildPlan } from '../../src/export/routing/plan.ts';
import type { ProgressSink } from '../../src/export/run-args.ts';
import { runOnce } from '../../src/pipeline/run.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { killOnStart, progressOn, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox } from '../support/export-check.ts';
import { SHARED_SANDBOX_FLAGS } from '../support/shared-sandbox.ts';

const CHAIN = 56;
/** In catalog order, as a plan runs them. */
const DATASETS = ['dodoex.pairs', 'dodoex.swaps'];
/** The second route's own key: it must never show. */
const B_KEY = 'b'.repeat(32);
let a: SandboxProcess;
let b: SandboxProcess;
const dirs: string[] = [];

beforeAll(async () => {
  [a, b] = await Promise.all([startSandbox(SHARED_SANDBOX_FLAGS), startSandbox(SHARED_SANDBOX_FLAGS, B_KEY)]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Puts both sandboxes back as they started: no lag, no garbage, the same chain. */
async function healthy(): Promise<void> {
  for (const s of [a, b]) {
    await s.control('faults', { lagBlocks: 0 });
    await s.control('garbage', {});
  }
}

function folder(): string {
  const d = mkdtempSync(join(tmpdir(), 'pool-export-routes-'));
  dirs.push(d);
  return join(d, 'data');
}

/** One run over the two routes, A first; what it logged and its results. */
async function exportOnce(
  dataDir: string,
  overrides: Record<string, unknown> = {},
  opts: { progress?: ProgressSink; routes?: [SandboxProcess, SandboxProcess]; datasets?: string[] } = {},
) {
  const [first, second] = opts.routes ?? [a, b];
  const config = loadConfig({
    env: sandboxEnv(first, dataDir),
    overrides: {
      chains: [String(CHAIN)],
      routes: { [`${CHAIN}/dodoex`]: [{ kind: 'self' }, { kind: 'self', baseUrl: second.url, apiKey: B_KEY }] },
      ...overrides,
    },
  });
  const events: { event: string; fields: Record<string, unknown>; level: string }[] = [];
  const outcome = await runOnce({
    config,
    tasks: buildPlan(config, { jobs: JOBS, chains: [CHAIN], datasets: opts.datasets ?? DATASETS }),
    jobs: [],
    signal: new AbortController().signal,
    log: (event, fields, level = 'info') => events.push({ event, fields, level }),
    waitLockSecs: 0,
    ...(opts.progress ? { progress: opts.progress } : {}),
  });
  return { outcome, events };
}

/** The route each task of the folder's last run was served by, and the routes' states then. */
async function ledger(dataDir: string) {
  const w = await Warehouse.open(dataDir, { readOnly: true });
  try {
    return await w.all(
      `SELECT dataset, status, route, routes, failovers FROM _pool_export.run_tasks
       WHERE run_id = (SELECT arg_max(run_id, started_at) FROM _pool_export.runs) ORDER BY dataset`,
    );
  } finally {
    await w.close();
  }
}

/**
 * A progress sink that, on the first page of swaps, runs `before` and then kills `victim`; `killed` resolves once the
 * process has exited (the run goes on meanwhile, as it would).
 */
function killOnFirstSwapsPage(victim: SandboxProcess, before: () => Promise<unknown> = async () => {}) {
  let killed: Promise<unknown> | undefined;
  const progress = progressOn({
    page: (task) => {
      if (task.ds.name !== 'dodoex.swaps' || killed) return;
      // Frozen at once: the pager fetches ahead while a batch commits, and `before` takes a round trip, so a victim
      // left running could serve every remaining page before it dies (then there is nothing to move).
      victim.child.kill('SIGSTOP');
      killed = before().then(() => {
        const exited = new Promise((r) => victim.child.once('exit', r));
        victim.child.kill('SIGKILL');
        return exited;
      });
    },
  });
  return { progress, killed: () => killed };
}

const label = (s: SandboxProcess, schema = 'dodoex') =>
  `${s.url}/subgraph/graphql?chainId=${CHAIN}&schemaName=${schema}&apikey=***`;
/** Both routes, A first, for a schema of the chain. */
const bothRoutes = (schema: string) => ({
  [`${CHAIN}/${schema}`]: [{ kind: 'self' }, { kind: 'self', baseUrl: b.url, apiKey: B_KEY }],
});

describe('several routes for one chain and schema', () => {
  it('passes over a route 500 blocks behind for a fresher one, and reads every row from it', async () => {
    await healthy();
    await a.control('faults', { lagBlocks: 500 });
    const data = folder();
    const { outcome, events } = await exportOnce(data);
    expect(outcome.results.map((r) => [r.task.ds.name, r.status, r.route])).toEqual(
      DATASETS.map((d) => [d, 'ok', label(b)]),
    );
    expect((await compareWithSandbox(b, data, [CHAIN], DATASETS)).mismatches).toEqual([]);
    const rows = await ledger(data);
    expect(rows.map((r) => [r.dataset, r.route])).toEqual([
      ['dodoex.pairs', label(b)],
      ['dodoex.swaps', label(b)],
    ]);
    const states = JSON.parse(String(rows[0]!.routes)) as { state: string; lagBlocks: number; note: string }[];
    expect(states.map((s) => [s.state, s.lagBlocks])).toEqual([
      ['behind', 500],
      ['chosen', 0],
    ]);
    // Each task says which route it took and which were passed over (not the chosen one, nor the standbys), and why.
    expect(
      events
        .filter((e) => e.event === 'route-chosen')
        .map((e) => [e.level, e.fields.dataset, e.fields.route, e.fields.passedOver]),
    ).toEqual(
      DATASETS.map((d) => [
        'warn',
        d,
        label(b),
        [expect.objectContaining({ label: label(a), state: 'behind', lagBlocks: 500 })],
      ]),
    );
    expect(JSON.stringify(events)).not.toContain(B_KEY);
  });

  it('freshest mode takes the fresher route even within maxLagBlocks', async () => {
    await healthy();
    await a.control('faults', { lagBlocks: 10 });
    const data = folder();
    const { outcome, events } = await exportOnce(data, { routeChoice: 'freshest' });
    expect(outcome.results.map((r) => r.route)).toEqual([label(b), label(b)]);
    // A, within maxLagBlocks, stands by: nothing was passed over.
    expect(events.filter((e) => e.event === 'route-chosen').map((e) => e.fields.passedOver)).toEqual([[], []]);
    const first = await exportOnce(folder());
    expect(first.outcome.results.map((r) => r.route)).toEqual([label(a), label(a)]);
  });

  it('skips a route that reports indexing errors, and goes back to it on the next run once it recovers', async () => {
    await healthy();
    await a.control('garbage', { mode: 'indexing-errors' });
    const data = folder();
    const one = await exportOnce(data);
    expect(one.outcome.results.map((r) => [r.status, r.route])).toEqual([
      ['ok', label(b)],
      ['ok', label(b)],
    ]);
    const states = JSON.parse(String((await ledger(data))[0]!.routes)) as { state: string; note: string }[];
    expect(states[0]).toMatchObject({ state: 'unhealthy', note: expect.stringContaining('reports indexing errors') });
    expect((await compareWithSandbox(b, data, [CHAIN], DATASETS)).mismatches).toEqual([]);
    await a.control('garbage', {});
    const two = await exportOnce(data);
    expect(two.outcome.results.map((r) => [r.status, r.route])).toEqual([
      ['ok', label(a)],
      ['ok', label(a)],
    ]);
    // The first route, taken again, is no news: nothing is logged about the choice.
    expect(two.events.filter((e) => e.event === 'route-chosen')).toEqual([]);
    expect((await compareWithSandbox(a, data, [CHAIN], DATASETS)).mismatches).toEqual([]);
  });

  it('refuses a route on another fork, naming both hashes, and stores nothing from it', async () => {
    // B reorganises its last 20,000 blocks (about 17 hours of BSC): the head of A, lagging 500, is not on B's chain.
    const own = await startSandbox(SHARED_SANDBOX_FLAGS, B_KEY);
    const saved = b;
    try {
      b = own;
      await healthy();
      await a.control('faults', { lagBlocks: 500 });
      await own.control('reorg', { depth: 20_000, chainId: CHAIN });
      const data = folder();
      const { outcome } = await exportOnce(data);
      expect(outcome.results.map((r) => [r.status, r.route])).toEqual([
        ['ok', label(a)],
        ['ok', label(a)],
      ]);
      const states = JSON.parse(String((await ledger(data))[0]!.routes)) as { state: string; note: string }[];
      expect(states[1]!.state).toBe('forked');
      expect(states[1]!.note).toMatch(
        /^on another fork than .+: block \d+ has hash 0x[0-9a-f]+ on .+, which .+ does not have \(its head \d+ has hash 0x[0-9a-f]+\)$/,
      );
      // The rows are A's, at A's block; the forked route's differ there.
      expect((await compareWithSandbox(a, data, [CHAIN], DATASETS)).mismatches).toEqual([]);
      expect((await compareWithSandbox(own, data, [CHAIN], ['dodoex.swaps'])).mismatches).not.toEqual([]);
    } finally {
      b = saved;
      await own.stop();
    }
  });

  // In shards, each shard moves on its own; in one pass, the task moves once.
  it.each([
    ['in shards', {}],
    ['in one pass', { shards: 1 }],
  ])(
    'moves a task to the next route when its route is killed mid-backfill (%s), repeating and skipping no row',
    async (_, over) => {
      const [ownA, ownB] = await Promise.all([
        startSandbox(SHARED_SANDBOX_FLAGS),
        startSandbox(SHARED_SANDBOX_FLAGS, B_KEY),
      ]);
      try {
        const data = folder();
        // A dies once the first page of swaps is in: the backfill's other pages come from B.
        const { progress, killed } = killOnFirstSwapsPage(ownA);
        const { outcome, events } = await exportOnce(
          data,
          { maxAttempts: 2, ...over },
          { progress, routes: [ownA, ownB] },
        );
        await killed();
        const swaps = outcome.results.find((r) => r.task.ds.name === 'dodoex.swaps')!;
        expect(swaps.status).toBe('ok');
        expect(swaps.route).toBe(label(ownB));
        if ('shards' in over) expect(swaps.failovers).toHaveLength(1);
        else expect(swaps.failovers!.length).toBeGreaterThan(0);
        for (const f of swaps.failovers!) {
          expect(f).toMatchObject({ from: label(ownA), to: label(ownB), block: swaps.block });
          expect(f.refused).toBeUndefined();
        }
        // The head the task saw at its start was A's: after the move it says nothing of what the task read, so none is
        // kept (the next run reads the task again, even at the same head). Pairs, read on A alone, keeps A's.
        const pairs = outcome.results.find((r) => r.task.ds.name === 'dodoex.pairs')!;
        expect([swaps.head, pairs.failovers]).toEqual([undefined, undefined]);
        expect(pairs.head).toMatch(/^\d+:0x[0-9a-f]+$/);
        expect(events.filter((e) => e.event === 'failover').length).toBe(
          outcome.results.reduce((n, r) => n + (r.failovers?.length ?? 0), 0),
        );
        // Exact: count, digest and typed columns against the route that finished it (the same world as A's).
        expect((await compareWithSandbox(ownB, data, [CHAIN], DATASETS)).mismatches).toEqual([]);
        const rows = await ledger(data);
        const swapsRow = rows.find((r) => r.dataset === 'dodoex.swaps')!;
        expect(swapsRow.route).toBe(label(ownB));
        expect(JSON.parse(String(swapsRow.failovers))).toEqual(swaps.failovers);
        expect(JSON.stringify(rows)).not.toContain(B_KEY);
      } finally {
        await Promise.all([ownA.stop(), ownB.stop()]);
      }
    },
  );

  it('the liquidity list, read from the service and not from a route, fails with its host and moves nowhere', async () => {
    const [ownA, ownB] = await Promise.all([
      startSandbox(SHARED_SANDBOX_FLAGS),
      startSandbox(SHARED_SANDBOX_FLAGS, B_KEY),
    ]);
    try {
      // A dies once the routes are chosen (A, the first), before the list asks for its first page.
      const { progress, killed } = killOnStart(ownA);
      const { outcome } = await exportOnce(
        folder(),
        { maxAttempts: 2 },
        { progress, routes: [ownA, ownB], datasets: ['list.liquidity'] },
      );
      await killed();
      const [list] = outcome.results;
      expect([list!.status, list!.error!.cls, list!.route, list!.failovers]).toEqual([
        'failed',
        'upstream-unreachable',
        label(ownA),
        undefined,
      ]);
      expect(list!.error!.message).toContain(new URL(ownA.url).host);
    } finally {
      await Promise.all([ownA.stop(), ownB.stop()]);
    }
  });

  it('refuses to move to a route on another fork, naming both hashes, and stores nothing from it', async () => {
    const [ownA, ownB] = await Promise.all([
      startSandbox(SHARED_SANDBOX_FLAGS),
      startSandbox(SHARED_SANDBOX_FLAGS, B_KEY),
    ]);
    try {
      const data = folder();
      // Both agree at the start; after its first page of swaps, B reorganises and only then does A die, so the move
      // is asked of a B on another fork.
      const { progress, killed } = killOnFirstSwapsPage(ownA, () =>
        ownB.control('reorg', { depth: 20_000, chainId: CHAIN }),
      );
      const stored = async () => {
        const w = await Warehouse.open(data, { readOnly: true });
        try {
          return (await w.all('SELECT count(*)::INTEGER AS n FROM dodoex.swaps'))[0]!.n;
        } finally {
          await w.close();
        }
      };
      const { outcome } = await exportOnce(
        data,
        { maxAttempts: 2, shards: 1, batchRows: 1 },
        { progress, routes: [ownA, ownB] },
      );
      await killed();
      const swaps = outcome.results.find((r) => r.task.ds.name === 'dodoex.swaps')!;
      expect(swaps.status).toBe('failed');
      // The task is still A's: a refused move does not change its route.
      expect(swaps.route).toBe(label(ownA));
      const refused = swaps.failovers!.filter((f) => f.refused);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0]!.refused).toMatch(
        /^it is on another fork: at block \d+ its hash is 0x[0-9a-f]+, on .+ 0x[0-9a-f]+$/,
      );
      // Only the batch A served before it died is stored.
      expect(await stored()).toBe(swaps.stats.rows);
    } finally {
      await Promise.all([ownA.stop(), ownB.stop()]);
    }
  });

  it("chooses per schema: each schema's tasks read its own route; the liquidity list keeps its own endpoint", async () => {
    await healthy();
    await a.control('faults', { lagBlocks: 500 });
    const data = folder();
    const datasets = ['dodoex.pairs', 'token.tokens', 'list.liquidity'];
    const { outcome } = await exportOnce(
      data,
      { routes: { ...bothRoutes('dodoex'), ...bothRoutes('token') } },
      { datasets },
    );
    // Each schema chose B (A lags 500 blocks), at B's address for that schema; the list's block comes from the exchange
    // route chosen, its rows from the service's list endpoint.
    expect(outcome.results.map((r) => [r.task.ds.name, r.status, r.route]).sort()).toEqual([
      ['dodoex.pairs', 'ok', label(b)],
      ['list.liquidity', 'ok', label(b)],
      ['token.tokens', 'ok', label(b, 'token')],
    ]);
    expect((await compareWithSandbox(b, data, [CHAIN], ['dodoex.pairs', 'token.tokens'])).mismatches).toEqual([]);
    const w = await Warehouse.open(data, { readOnly: true });
    try {
      const [pools] = await w.all('SELECT count(*)::INTEGER AS n FROM list.liquidity');
      expect(pools!.n).toBeGreaterThan(0);
    } finally {
      await w.close();
    }
  });

  it('fails the task, naming every route and why, when none can serve it', async () => {
    await healthy();
    await a.control('garbage', { mode: 'indexing-errors' });
    await b.control('garbage', { mode: 'indexing-errors' });
    const data = folder();
    // Each message names the subgraph of its own schema.
    const { outcome } = await exportOnce(
      data,
      { routes: { ...bothRoutes('dodoex'), ...bothRoutes('token') } },
      { datasets: [...DATASETS, 'token.tokens'] },
    );
    expect(outcome.results.map((r) => r.task.ds.name).sort()).toEqual([...DATASETS, 'token.tokens']);
    for (const r of outcome.results) {
      expect(r.status).toBe('failed');
      expect(r.error!.cls).toBe('no-route');
      expect(r.error!.message).toMatch(
        /^(dodoex|token)\.\w+ on bsc: no route can serve it: route 1 \(.+\): unhealthy, the \1 subgraph of bsc reports indexing errors.*; route 2 \(.+\): unhealthy, /,
      );
      expect(r.error!.message).not.toContain(B_KEY);
    }
    await healthy();
  });
});
