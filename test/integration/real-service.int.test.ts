/**
 * Where the real service departs from a naive stand-in: root field names that depend on the graph-node version,
 * deployments without some entities, `updatedAt` left null by the real mappings, the list's own types, nullable list
 * answers and repeated ids. Sources: DODOEX/dodoex_v2_subgraph 0eb5baca, DODOEX/widgets a56d6a1a,
 * graphprotocol/graph-node (ebe91ad42, v0.35.0).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildClientSchema,
  type GraphQLNamedType,
  getIntrospectionQuery,
  type IntrospectionQuery,
  isInputObjectType,
  isObjectType,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox } from '../support/export-check.ts';
import { allRows, post } from '../support/sandbox-client.ts';

const CHAINS = [56, 137];
const CHAIN_FLAGS = ['--chains', 'bsc,polygon'];
/** One chain, where a behaviour is the same on every chain (the root field names of a graph-node version). */
const ONE_CHAIN = [56];
/** Datasets of the entities the gateway's deployment lacks (DODOEX/widgets a56d6a1a graphql.ts, type Query). */
const MISSING = ['dodoex.dpp_oracle_admins', 'dodoex.pair_details', 'dodoex.positive_slippages'];
/** The entities whose updatedAt the real mappings leave null (all of them, or until a later event). */
const NULL_UPDATED = ['dodoex.maintainer_fee_txes', 'dodoex.maintainer_earnings', 'dodoex.lp_tokens'];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pool-export-real-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A sandbox with a deployment profile on the self-hosted route, stopped after the block. */
function withSandbox(flags: string[], body: (sb: SandboxProcess) => Promise<void>): () => Promise<void> {
  return async () => {
    const sb = await startSandbox(['--scale', '1500', ...flags]);
    try {
      await body(sb);
    } finally {
      await sb.stop();
    }
  };
}

describe('root fields and deployments', () => {
  it.each([
    ['current', 'graph-node 0.35+: maintainerEarnings_collection'],
    ['legacy', 'graph-node before 0.35: maintainerEarnings is the collection, no single-row field'],
  ])(
    'exports exactly against the %s naming (%s), resolving every root field from introspection',
    (profile) =>
      withSandbox(['--profile', profile], async (sb) => {
        const data = join(dir, `naming-${profile}`);
        const r = await cli(['run', '--chains', 'bsc'], sandboxEnv(sb, data));
        expect(r.code, r.stdout + r.stderr).toBe(0);
        const cmp = await compareWithSandbox(sb, data, ONE_CHAIN);
        expect(cmp.mismatches).toEqual([]);
        expect(cmp.unavailable).toEqual([]);
        expect(cmp.checked).toBe(40 * ONE_CHAIN.length);
      })(),
    120_000,
  );

  it(
    'skips the datasets a deployment lacks, as unavailable: not failed, not stale, in the summary, ledger, status and schema check',
    withSandbox(['--profile', 'gateway'], async (sb) => {
      const data = join(dir, 'reduced');
      const env = sandboxEnv(sb, data);
      const r = await cli(['run', ...CHAIN_FLAGS], env);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const cmp = await compareWithSandbox(sb, data, CHAINS);
      expect(cmp.mismatches).toEqual([]);
      expect(cmp.unavailable.sort()).toEqual(MISSING.flatMap((d) => CHAINS.map((c) => `${d}@${c}`)).sort());
      expect(r.stdout).toMatch(/\(\d+ ok, 0 failed, 6 unavailable, \d+ with no new rows\)/);
      expect(r.stdout).toContain(
        'unavailable (the upstream deployment has no such entity; skipped there, not a failure): dodoex.positive_slippages on bsc, polygon;',
      );
      // One warning per dataset and chain, in the log.
      expect(r.stderr.match(/"event":"task-unavailable"/g)).toHaveLength(6);
      const w = await Warehouse.open(data, { readOnly: true });
      const ledger = await w.all(
        'SELECT status, count(*) AS n FROM _pool_export.run_tasks GROUP BY ALL ORDER BY status',
      );
      const run = await w.all('SELECT status, failed FROM _pool_export.runs');
      await w.close();
      expect(ledger).toEqual([
        { status: 'ok', n: String(41 * 2 - 6) },
        { status: 'unavailable', n: '6' },
      ]);
      expect(run).toEqual([{ status: 'ok', failed: 0 }]);

      const status = await cli(['status', '--json', ...CHAIN_FLAGS], env);
      expect(status.code, status.stdout + status.stderr).toBe(0);
      const rows = (
        JSON.parse(status.stdout) as {
          datasets: { dataset: string; chainId: number; unavailable: boolean; stale: boolean }[];
        }
      ).datasets;
      expect(
        rows
          .filter((x) => x.unavailable)
          .map((x) => `${x.dataset}@${x.chainId}`)
          .sort(),
      ).toEqual(cmp.unavailable.sort());
      expect(rows.filter((x) => x.stale)).toEqual([]);
      const table = await cli(['status', ...CHAIN_FLAGS], env);
      expect(table.stdout).toMatch(/^dodoex\.pair_details +bsc .* unavailable$/m);

      const check = await cli(['schema', 'check', '--chains', 'bsc', '--schemas', 'dodoex'], env);
      expect(check.code, check.stdout).toBe(0);
      expect(check.stdout).toContain(
        'unavailable type PositiveSlippage is not in this deployment: its dataset is skipped here',
      );
      // The mapping found: the legacy collection name, found by its type.
      expect(check.stdout).toMatch(/root fields: .*MaintainerEarnings → maintainerEarnings(,|\n)/);
    }),
    120_000,
  );
});

describe('rows whose updatedAt is null', () => {
  /** Digest of an entity's rows at the head, to prove a step changed them. */
  const digest = async (sb: SandboxProcess, chainId: number, entity: string) =>
    JSON.stringify(await allRows(sb, chainId, 'dodoex', entity));

  it.each([
    ['current', 'by _change_block'],
    ['ancient', 'by the updatedAt keyset and a pass over the nulls (no _change_block before graph-node 0.27)'],
  ])(
    'are all copied on the %s deployment (%s): after a backfill, new blocks and a reorg',
    (profile) =>
      withSandbox(['--profile', profile], async (sb) => {
        const data = join(dir, `nulls-${profile}`);
        const env = sandboxEnv(sb, data);
        const args = ['run', '--chains', 'bsc', '--datasets', NULL_UPDATED.join(',')];
        const before = await Promise.all(['MaintainerEarnings', 'LpToken'].map((e) => digest(sb, 56, e)));
        const nulls = (await allRows(sb, 56, 'dodoex', 'LpToken')).filter((r) => r.updatedAt === null).length;
        expect(nulls).toBeGreaterThan(0);
        expect((await allRows(sb, 56, 'dodoex', 'MaintainerFeeTx')).every((r) => r.updatedAt === null)).toBe(true);
        expect((await cli(args, env)).code).toBe(0);
        expect((await compareWithSandbox(sb, data, [56], NULL_UPDATED)).mismatches).toEqual([]);

        // New blocks change earnings and LP tokens (some of whose updatedAt stays null) and add fee rows.
        await sb.control('advance', { blocks: 40_000, chainId: 56 });
        const after = await Promise.all(['MaintainerEarnings', 'LpToken'].map((e) => digest(sb, 56, e)));
        expect(after[0]).not.toBe(before[0]);
        expect(after[1]).not.toBe(before[1]);
        const second = await cli(args, env);
        expect(second.code, second.stdout + second.stderr).toBe(0);
        expect((await compareWithSandbox(sb, data, [56], NULL_UPDATED)).mismatches).toEqual([]);

        const preReorg = await Promise.all(
          ['MaintainerEarnings', 'LpToken', 'MaintainerFeeTx'].map((e) => digest(sb, 56, e)),
        );
        await sb.control('reorg', { depth: 3000, chainId: 56 });
        const postReorg = await Promise.all(
          ['MaintainerEarnings', 'LpToken', 'MaintainerFeeTx'].map((e) => digest(sb, 56, e)),
        );
        expect(postReorg).not.toEqual(preReorg);
        const third = await cli(args, env);
        expect(third.code, third.stdout + third.stderr).toBe(0);
        expect((await compareWithSandbox(sb, data, [56], NULL_UPDATED)).mismatches).toEqual([]);
      })(),
    180_000,
  );
});

describe('the liquidity list', () => {
  it(
    "serves exactly the service's types: names, nullability and argument types (DODOEX/widgets a56d6a1a graphql.ts)",
    withSandbox([], async (sb) => {
      const real = JSON.parse(
        readFileSync(new URL('../fixtures/real-liquidity-list-types.json', import.meta.url), 'utf8'),
      ) as {
        query: Record<string, { type: string; args: Record<string, string> }>;
        types: Record<string, Record<string, string>>;
      };
      const r = await post(sb, `/graphql?opname=FetchLiquidityList&apikey=${sb.apiKey}`, {
        query: getIntrospectionQuery(),
      });
      const schema = buildClientSchema(r.body.data as unknown as IntrospectionQuery);
      const fieldsOf = (t: GraphQLNamedType | undefined): Record<string, string> => {
        if (isObjectType(t) || isInputObjectType(t))
          return Object.fromEntries(Object.values(t.getFields()).map((f) => [f.name, String(f.type)]));
        throw new Error(`the sandbox has no type ${String(t)}`);
      };
      for (const [name, fields] of Object.entries(real.types))
        expect(fieldsOf(schema.getType(name)), name).toEqual(fields);
      const root = schema.getQueryType()!.getFields().liquidity_list!;
      expect({
        type: String(root.type),
        args: Object.fromEntries(root.args.map((a) => [a.name, String(a.type)])),
      }).toEqual(real.query.liquidity_list);
    }),
    60_000,
  );

  it(
    'asks for every pool type by name: the sandbox, like a cautious reading of the service, answers a request without filterTypes with three types only',
    withSandbox([], async (sb) => {
      const url = `/graphql?opname=FetchLiquidityList&apikey=${sb.apiKey}`;
      const types = async (where: string) =>
        new Set(
          (
            (
              await post(sb, url, {
                query: `{ liquidity_list(where: { chainIds: [56], pageSize: 1000${where} }) { lqList { pair { type } } } }`,
              })
            ).body.data!.liquidity_list.lqList as { pair: { type: string } }[]
          ).map((i) => i.pair.type),
        );
      const real = [
        ...new Set(
          (await allRows(sb, 56, 'dodoex', 'Pair')).map((p) => p.type as string).filter((t) => t !== 'VIRTUAL'),
        ),
      ].sort();
      expect(real).toContain('DPP');
      expect([...(await types(''))].sort()).toEqual(real.filter((t) => ['CLASSICAL', 'DSP', 'DVM'].includes(t)));
      const all = await types(
        ', filterState: { filterTypes: ["CLASSICAL", "DVM", "DSP", "GSP", "DPP", "AMMV2", "AMMV3"] }',
      );
      expect([...all].sort()).toEqual(real);
      const data = join(dir, 'list-types');
      expect((await cli(['run', '--jobs', 'liquidity', '--chains', 'bsc'], sandboxEnv(sb, data))).code).toBe(0);
      const w = await Warehouse.open(data, { readOnly: true });
      const stored = await w.all('SELECT DISTINCT type FROM list.liquidity ORDER BY type');
      await w.close();
      expect(stored.map((x) => x.type)).toEqual(real);
    }),
    60_000,
  );

  it.each([
    [
      'liquidity_list',
      1,
      /FAILED list\.liquidity on bsc: the liquidity list answered liquidity_list: null for chain 56 \(page 1\); no snapshot is stored this run/,
    ],
    [
      'lqList',
      1,
      /FAILED list\.liquidity on bsc: liquidity list of chain 56 returned 0 distinct pools but totalCount \d+ \(lqList was null on page 1\)/,
    ],
    ['totalCount', 0, null],
  ])(
    'handles a null %s: exit %i, never a TypeError',
    (field, code, message) =>
      withSandbox([], async (sb) => {
        const data = join(dir, `list-null-${field}`);
        await sb.control('garbage', { mode: 'null-answer', field });
        const r = await cli(['run', '--jobs', 'liquidity', '--chains', 'bsc'], { ...sandboxEnv(sb, data) });
        await sb.control('garbage', {});
        expect(r.code, r.stdout + r.stderr).toBe(code);
        expect(r.stdout + r.stderr).not.toMatch(/TypeError|Cannot read/);
        if (message) expect(r.stdout).toMatch(message);
        const w = await Warehouse.open(data, { readOnly: true });
        const n = Number((await w.all('SELECT count(*) AS n FROM list.liquidity'))[0]!.n);
        await w.close();
        // A null count only skips the count check: every pool is stored. The failed passes store nothing.
        if (field === 'totalCount') expect(n).toBeGreaterThan(0);
        else expect(n).toBe(0);
      })(),
    60_000,
  );
});

describe('repeated ids', () => {
  it.each([
    ['Swap', 'dodoex.swaps'],
    ['Pair', 'dodoex.pairs'],
  ])(
    'a page of %s that repeats an id: one row per id is stored, the newest, and the repeats are counted',
    (entity, dataset) =>
      withSandbox([], async (sb) => {
        const data = join(dir, `dup-${entity}`);
        await sb.control('garbage', { mode: 'duplicate-id', entity });
        const r = await cli(['run', '--chains', 'bsc', '--datasets', dataset], sandboxEnv(sb, data));
        await sb.control('garbage', {});
        expect(r.code, r.stdout + r.stderr).toBe(0);
        const w = await Warehouse.open(data, { readOnly: true });
        const table = dataset.replace('.', '"."');
        const rows = await w.all(`SELECT id, updated_at_text AS u FROM "${table}" WHERE chain_id = 56`);
        const dups = Number((await w.all('SELECT sum(duplicate_ids) AS n FROM _pool_export.run_tasks'))[0]!.n);
        await w.close();
        const source = new Map(
          (await allRows(sb, 56, 'dodoex', entity)).map((x) => [x.id as string, x.updatedAt as string]),
        );
        expect(new Set(rows.map((x) => x.id)).size).toBe(rows.length);
        expect(rows.length).toBe(source.size);
        // The repeat came one second newer: exactly the repeated ids hold it, and the ledger counts them.
        const newer = rows.filter((x) => x.u !== source.get(String(x.id)));
        for (const x of newer) expect(BigInt(String(x.u))).toBe(BigInt(source.get(String(x.id))!) + 1n);
        expect(newer.length).toBeGreaterThan(0);
        expect(dups).toBe(newer.length);
        expect(r.stdout).toContain(`${dups} rows repeated an id the upstream had already sent`);
        expect(r.stderr).toContain('"event":"duplicate-ids"');
      })(),
    60_000,
  );
});
