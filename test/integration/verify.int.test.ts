/**
 * `verify` against a sandbox process: a clean export of every chain verifies; rows the sandbox left out silently (its
 * own list is the oracle) are named exactly, by chain, dataset, day and pool, and `--repair` brings them back; so are
 * rows deleted from the warehouse by hand. After a repair the warehouse equals the sandbox's rows at the checkpointed
 * blocks, the lake equals the warehouse, and the checkpoints are as they were.
 */
import { mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainName } from '../../src/config/chains.ts';
import { EXIT_GAPS } from '../../src/errors.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { KNOWN_CHAINS } from '../../src/sandbox/timeline.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';
import { waitForRequests } from '../support/sandbox-client.ts';

const DAY = 86_400;
/** The datasets an identity checks, with the entity each holds and where a row's day and group are. */
const COVERED: Record<string, { dataset: string; day?: string; key?: string }> = {
  Swap: { dataset: 'dodoex.swaps', day: 'timestamp', key: 'pair' },
  Transaction: { dataset: 'dodoex.transactions', day: 'timestamp' },
  PairDayData: { dataset: 'dodoex.pair_day_datas', day: 'date', key: 'pairAddress' },
  DodoDayData: { dataset: 'dodoex.dodo_day_datas', day: 'date' },
  UserDayData: { dataset: 'dodoex.user_day_datas', day: 'date' },
  TokenDayData: { dataset: 'dodoex.token_day_datas', day: 'date', key: 'token' },
  BidPosition: { dataset: 'dodoex.bid_positions', key: 'cp' },
};
const COVERED_DATASETS = Object.values(COVERED).map((c) => c.dataset);

let sb: SandboxProcess;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox(['--scale', '600']);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-verify-'));
});
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Named {
  chain: string;
  dataset: string;
  day: string | null;
  key: string | null;
  expected: number;
  found: number;
}

/** `verify --format json` (with more flags); its exit code and report. */
async function verifyJson(data: string, flags: string[] = []) {
  const r = await cli(['verify', '--format', 'json', ...flags], sandboxEnv(sb, data));
  if (!r.stdout.startsWith('{')) throw new Error(`verify printed no JSON (exit ${r.code}): ${r.stderr}`);
  return { code: r.code, report: JSON.parse(r.stdout), stderr: r.stderr };
}

/** Each group's shortfall: (chain, dataset, day, key) → expected − found. */
const shortfall = (ms: Named[]) =>
  Object.fromEntries(ms.map((m) => [JSON.stringify([m.chain, m.dataset, m.day, m.key]), m.expected - m.found]));

async function checkpoints(data: string): Promise<Record<string, unknown>[]> {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    return await w.all('SELECT * FROM _pool_export.checkpoints ORDER BY chain_id, dataset');
  } finally {
    await w.close();
  }
}

const dayOf = (t: unknown) => new Date(Math.floor(Number(t) / DAY) * DAY * 1000).toISOString().slice(0, 10);

describe('verify', () => {
  const clean = () => join(dir, 'clean');

  it('a clean export of every chain verifies with no mismatch, every identity checked', async () => {
    const env = sandboxEnv(sb, clean());
    expect((await cli(['run'], env)).code).toBe(0);
    const { code, report } = await verifyJson(clean());
    expect(report.mismatches).toEqual([]);
    expect(code).toBe(0);
    const chains = new Set(report.checks.map((c: { chain: string }) => c.chain));
    expect([...chains].sort()).toEqual(KNOWN_CHAINS.map((c) => c.name).sort());
    // Every identity of every chain was compared, none skipped or failed, each over some groups.
    for (const c of report.checks) {
      expect(c.skipped ?? c.error, `${c.chain} ${c.identity}`).toBeUndefined();
      expect(c.groups, `${c.chain} ${c.identity}`).toBeGreaterThan(0);
    }
    expect(report.requests).toBeGreaterThan(0);
    // With pages of 50 rows, counters of more rows are read on past their first page (batched with the others): the
    // same groups compared, in more requests.
    const config = join(dir, 'small-pages.json');
    writeFileSync(config, JSON.stringify({ pageSize: 50 }));
    const small = await verifyJson(clean(), ['--config', config]);
    expect(small.report.checks.filter((c: { error?: string }) => c.error)).toEqual([]);
    expect(small.code).toBe(0);
    const groups = (r: { checks: { chain: string; identity: string; groups: number }[] }) =>
      r.checks.map((c) => `${c.chain} ${c.identity} ${c.groups}`);
    expect(groups(small.report)).toEqual(groups(report));
    expect(small.report.requests).toBeGreaterThan(report.requests + KNOWN_CHAINS.length);
  }, 240_000);

  it('names exactly the rows left out silently, and --repair brings them back into the warehouse and the lake', async () => {
    const data = join(dir, 'dropped');
    const env = sandboxEnv(sb, data);
    const chains = ['bsc', 'polygon'];
    await sb.control('dropped', {});
    await sb.control('faults', { silentDrop: 0.01, silentDropEntities: Object.keys(COVERED) });
    let run: Awaited<ReturnType<typeof cli>>;
    try {
      // The run's own verification would read the counters while rows are still being left out: it is left to the
      // command below (the next test shows a run's verification).
      run = await cli(['run', '--chains', chains.join(','), '--no-verify'], env);
    } finally {
      await sb.control('faults', { silentDrop: 0, silentDropEntities: [] });
    }
    // The run itself sees nothing wrong.
    expect(run.code).toBe(0);
    const { dropped } = await sb.control<{
      dropped: { chainId: number; entity: string; row: Record<string, unknown>; servedLater: boolean }[];
    }>('dropped');
    const lost = dropped.filter((d) => !d.servedLater && [56, 137].includes(d.chainId));
    expect(lost.length).toBeGreaterThan(20);
    // The oracle: the sandbox's own list, grouped by chain, dataset, day and pool (token, crowd pool).
    const want: Record<string, number> = {};
    for (const d of lost) {
      const c = COVERED[d.entity]!;
      const key = JSON.stringify([
        chainName(d.chainId),
        c.dataset,
        c.day ? dayOf(d.row[c.day]) : null,
        c.key ? String(d.row[c.key]) : null,
      ]);
      want[key] = (want[key] ?? 0) + 1;
    }
    const before = await checkpoints(data);
    const found = await verifyJson(data, ['--chains', chains.join(',')]);
    expect(found.code).toBe(EXIT_GAPS);
    expect(shortfall(found.report.mismatches)).toEqual(want);

    const repaired = await verifyJson(data, ['--chains', chains.join(','), '--repair']);
    expect(repaired.code).toBe(0);
    expect(shortfall(repaired.report.before.mismatches)).toEqual(want);
    expect(repaired.report.after.mismatches).toEqual([]);
    // One repair per chain and dataset with rows lost, and none other.
    expect(
      repaired.report.repaired.map((r: { chainId: number; dataset: string }) => `${r.chainId} ${r.dataset}`).sort(),
    ).toEqual([...new Set(lost.map((d) => `${d.chainId} ${COVERED[d.entity]!.dataset}`))].sort());
    // The warehouse holds the sandbox's rows, the lake the warehouse's, and no checkpoint moved.
    const compared = await compareWithSandbox(sb, data, [56, 137], COVERED_DATASETS);
    expect(compared.mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
    expect(await checkpoints(data)).toEqual(before);
  }, 180_000);

  it('names rows deleted from the warehouse by hand, and --repair restores them', async () => {
    const data = clean();
    const w = await Warehouse.open(data);
    let gone: Record<string, unknown>[];
    try {
      // Three swaps of one pool's day on bsc, a pool's day row on polygon, and two users on avax.
      gone = [
        ...(await w.all(
          `DELETE FROM dodoex.swaps WHERE id IN (SELECT id FROM dodoex.swaps WHERE chain_id = 56 AND (pair_id, timestamp // ${DAY}) =
             (SELECT (pair_id, timestamp // ${DAY}) FROM dodoex.swaps WHERE chain_id = 56 GROUP BY ALL HAVING count(*) > 5 ORDER BY ALL LIMIT 1)
           ORDER BY id LIMIT 3) RETURNING 'swaps' AS t, chain_id, pair_id AS k, timestamp AS d`,
        )),
        ...(await w.all(
          `DELETE FROM dodoex.pair_day_datas WHERE chain_id = 137 AND id = (SELECT min(id) FROM dodoex.pair_day_datas WHERE chain_id = 137)
           RETURNING 'pair_day_datas' AS t, chain_id, pair_address AS k, date AS d`,
        )),
        ...(await w.all(
          `DELETE FROM dodoex.users WHERE chain_id = 43114 AND id IN (SELECT id FROM dodoex.users WHERE chain_id = 43114 ORDER BY id LIMIT 2)
           RETURNING 'users' AS t, chain_id, NULL AS k, NULL AS d`,
        )),
      ];
    } finally {
      await w.close();
    }
    expect(gone.map((g) => g.t)).toEqual(['swaps', 'swaps', 'swaps', 'pair_day_datas', 'users', 'users']);
    const swap = gone[0]!;
    const day = gone[3]!;
    // And one month file of polygon's swaps in the lake, whose days' rows the warehouse still holds.
    const months = join(data, 'lake', 'dodoex', 'swaps', 'chain=polygon');
    const month = readdirSync(months).sort()[0]!;
    rmSync(join(months, month), { recursive: true });
    const r = await Warehouse.open(data, { readOnly: true });
    const perDay = await r.all(
      `SELECT strftime(to_timestamp(timestamp // ${DAY} * ${DAY}), '%Y-%m-%d') AS day, count(*) AS n FROM dodoex.swaps
       WHERE chain_id = 137 AND strftime(to_timestamp(timestamp), '%Y-%m') = $1 GROUP BY ALL`,
      [month.slice('month='.length)],
    );
    await r.close();
    expect(perDay.length).toBeGreaterThan(0);
    const found = await verifyJson(data);
    expect(found.code).toBe(EXIT_GAPS);
    const lake = (m: Named & { identity: string }) => m.identity === 'lake rows';
    // The lake against the warehouse: the month's days lack all their rows there; the days (and the table) whose
    // rows were deleted from the warehouse hold those rows more in the lake.
    expect(shortfall(found.report.mismatches.filter(lake))).toEqual({
      ...Object.fromEntries(perDay.map((d) => [JSON.stringify(['polygon', 'dodoex.swaps', d.day, null]), Number(d.n)])),
      [JSON.stringify(['bsc', 'dodoex.swaps', dayOf(swap.d), null])]: -3,
      [JSON.stringify(['polygon', 'dodoex.pair_day_datas', dayOf(day.d), null])]: -1,
      [JSON.stringify(['avax', 'dodoex.users', null, null])]: -2,
    });
    expect(shortfall(found.report.mismatches.filter((m: Named & { identity: string }) => !lake(m)))).toEqual({
      [JSON.stringify(['bsc', 'dodoex.swaps', dayOf(swap.d), swap.k])]: 3,
      [JSON.stringify(['polygon', 'dodoex.pair_day_datas', dayOf(day.d), day.k])]: 1,
      [JSON.stringify(['avax', 'dodoex.users', null, null])]: 2,
    });
    const before = await checkpoints(data);
    const repaired = await cli(['verify', '--repair'], sandboxEnv(sb, data));
    expect(repaired.code).toBe(0);
    expect(repaired.stdout).toContain('repaired dodoex.swaps on bsc');
    expect(repaired.stdout).toContain("rewrote the lake's files of dodoex.swaps on polygon from the warehouse");
    expect(repaired.stdout).toMatch(/after the repair:[\s\S]*every identity checked holds/);
    expect((await verifyJson(data)).code).toBe(0);
    const compared = await compareWithSandbox(
      sb,
      data,
      [56, 137, 43114],
      ['dodoex.swaps', 'dodoex.pair_day_datas', 'dodoex.users'],
    );
    expect(compared.mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
    expect(await checkpoints(data)).toEqual(before);
  }, 180_000);

  it('a run verifies the days it touched: gaps are logged, the run stays green, status shows them and exits 4', async () => {
    const data = join(dir, 'run-verifies');
    const env = sandboxEnv(sb, data);
    expect((await cli(['run', '--chains', 'optimism'], env)).code).toBe(0);
    await sb.control('advance', { blocks: 200_000, chainId: 10 });
    await sb.control('dropped', {});
    // Swaps only: the counters the run's verification reads are served whole.
    await sb.control('faults', { silentDrop: 0.2, silentDropEntities: ['Swap'] });
    let run: Awaited<ReturnType<typeof cli>>;
    try {
      run = await cli(['run', '--chains', 'optimism'], env);
    } finally {
      await sb.control('faults', { silentDrop: 0, silentDropEntities: [] });
    }
    const { dropped } = await sb.control<{ dropped: { chainId: number; row: { timestamp: string; pair: string } }[] }>(
      'dropped',
    );
    const lost = dropped.filter((d) => d.chainId === 10);
    expect(lost.length).toBeGreaterThan(0);
    expect(run.code).toBe(0);
    const gaps = run.stderr
      .split('\n')
      .filter((l) => l.includes('"event":"verify-gaps"'))
      .map((l) => JSON.parse(l));
    expect(gaps.map((g) => [g.dataset, g.chainId])).toEqual([['dodoex.swaps', 10]]);
    // As many groups as pool-days the lost swaps fall in.
    const groups = new Set(lost.map((d) => `${d.row.pair} ${dayOf(d.row.timestamp)}`));
    expect(gaps[0].gaps).toBe(groups.size);
    expect(run.stdout).toContain(`GAPS: ${groups.size} groups of the days this run touched differ`);
    const status = await cli(['status', '--chains', 'optimism'], env);
    expect(status.code).toBe(EXIT_GAPS);
    expect(status.stdout).toMatch(/dodoex\.swaps\s+optimism.*GAPS/);
    expect(status.stdout).toContain(`gaps: ${groups.size} groups differ from the upstream's counters`);
    const json = JSON.parse((await cli(['status', '--json', '--chains', 'optimism'], env)).stdout);
    const swaps = json.datasets.find((d: { dataset: string }) => d.dataset === 'dodoex.swaps');
    expect(swaps.verification.gaps).toBe(groups.size);
    // While a run holds the warehouse, verify answers with the last verification the runs recorded. Each answer takes
    // 1.5 s, so the run still holds it (its requests after the third wait for a second round of answers) once verify,
    // started after the third request, opens it: at 0.3 s a run whose commits ended sooner let go first.
    await sb.control('faults', { latencyMs: 1500 });
    await sb.control('stats', {});
    const held = cli(['run', '--chains', 'optimism', '--no-verify'], env);
    try {
      await waitForRequests(sb, 3);
      const during = await cli(['verify', '--chains', 'optimism'], env);
      expect(during.code).toBe(EXIT_GAPS);
      expect(during.stdout).toContain('a run holds the warehouse');
      expect(during.stdout).toMatch(new RegExp(`optimism\\s+dodoex\\.swaps\\s+\\S+\\s+${groups.size}\\n`));
    } finally {
      await sb.control('faults', { latencyMs: 0 });
      expect((await held).code).toBe(0);
    }
    // The repair clears them, and status with them.
    expect((await cli(['verify', '--repair', '--chains', 'optimism'], env)).code).toBe(0);
    expect((await cli(['status', '--chains', 'optimism'], env)).code).toBe(0);
    // Three runs, a verify during one, a repair and three statuses: about 40 s alone, and half again beside another file.
  }, 180_000);

  it('--values names a value changed in the warehouse and one changed in the lake, and --repair mends both', async () => {
    const data = clean();
    const env = sandboxEnv(sb, data);
    const only = ['--chains', 'bsc', '--datasets', 'dodoex.pairs,dodoex.swaps'];
    const first = await verifyJson(data, ['--values', ...only]);
    expect(first.report.mismatches).toEqual([]);
    expect(first.code).toBe(0);
    const values = first.report.checks.filter((c: { identity: string }) => c.identity === 'row values');
    expect(values.map((c: { dataset: string; groups: number }) => c.dataset).sort()).toEqual([
      'dodoex.pairs',
      'dodoex.swaps',
    ]);
    // By hand: one pair's reserve (its typed column alone), another's trader count (typed and text alike), and one
    // swap's amount in the lake's file of its month.
    const w = await Warehouse.open(data);
    let pairs: string[];
    let swap: Record<string, unknown>;
    try {
      pairs = (await w.all('SELECT id FROM dodoex.pairs WHERE chain_id = 56 ORDER BY id LIMIT 2')).map((r) =>
        String(r.id),
      );
      await w.exec('UPDATE dodoex.pairs SET base_reserve = base_reserve + 1 WHERE chain_id = 56 AND id = $1', [
        pairs[0]!,
      ]);
      await w.exec(
        'UPDATE dodoex.pairs SET trader_count = trader_count + 7, trader_count_text = CAST(trader_count + 7 AS VARCHAR) WHERE chain_id = 56 AND id = $1',
        [pairs[1]!],
      );
      swap = (
        await w.all(
          "SELECT id, strftime(to_timestamp(timestamp), '%Y-%m') AS month, timestamp // 86400 * 86400 AS day FROM dodoex.swaps WHERE chain_id = 56 ORDER BY id LIMIT 1",
        )
      )[0]!;
      const folder = join(data, 'lake', 'dodoex', 'swaps', 'chain=bsc', `month=${swap.month}`);
      const file = join(folder, readdirSync(folder).find((f) => f.endsWith('.parquet'))!);
      await w.exec(
        `COPY (SELECT * REPLACE (CASE WHEN id = $1 THEN amount_in * 2 + 1 ELSE amount_in END AS amount_in) FROM read_parquet('${file}')) TO '${file}.new' (FORMAT parquet)`,
        [String(swap.id)],
      );
      renameSync(`${file}.new`, file);
    } finally {
      await w.close();
    }
    const found = await verifyJson(data, ['--values', ...only]);
    expect(found.code).toBe(EXIT_GAPS);
    const named = found.report.mismatches.map((m: Named & { identity: string; detail?: string }) => [
      m.dataset,
      m.identity,
      m.day,
      m.key,
      m.detail,
    ]);
    expect(named.sort()).toEqual(
      [
        ['dodoex.pairs', 'row values', null, pairs[0], 'values of baseReserve (its typed column)'],
        ['dodoex.pairs', 'row values', null, pairs[1], 'values of traderCount'],
        // The lake's pairs are the warehouse's as it was: they differ from it now.
        ['dodoex.pairs', 'lake rows', null, null, 'values differ'],
        ['dodoex.swaps', 'lake rows', dayOf(swap.day), null, 'values differ'],
      ].sort(),
    );
    const repaired = await cli(['verify', '--values', '--repair', ...only], env);
    expect(repaired.code, repaired.stdout + repaired.stderr).toBe(0);
    expect(repaired.stdout).toMatch(/repaired dodoex.pairs on bsc \(every row, those gone upstream taken out\)/);
    expect(repaired.stdout).toMatch(/rewrote the lake's files of dodoex.swaps on bsc from the warehouse/);
    expect(repaired.stdout).toMatch(/rewrote the lake's files of dodoex.pairs on bsc from the warehouse/);
    expect((await compareWithSandbox(sb, data, [56], ['dodoex.pairs', 'dodoex.swaps'])).mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
    expect((await verifyJson(data, ['--values', ...only])).code).toBe(0);
  }, 180_000);

  it('refuses bad input with a usage error: an unknown dataset, one no identity checks, days the wrong way round', async () => {
    const env = sandboxEnv(sb, clean());
    const cases: [string[], string][] = [
      [['--datasets', 'dodoex.swapz'], 'unknown dataset "dodoex.swapz"'],
      [['--datasets', 'dodoex.order_histories'], 'no identity checks dodoex.order_histories'],
      [['--from', '2026-11-20', '--to', '2026-11-10'], '--to 2026-11-10 is before --from 2026-11-20'],
      [['--from', '2026-02-30'], '--from 2026-02-30 is not a day of the calendar'],
    ];
    for (const [flags, message] of cases) {
      const r = await cli(['verify', ...flags], env);
      expect(r.code, flags.join(' ')).toBe(2);
      expect(r.stderr).toContain(message);
    }
  });
});
