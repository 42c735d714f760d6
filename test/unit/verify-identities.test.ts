/**
 * Each identity of `verify` on a hand-written fixture: stored rows in a real DuckDB warehouse and the upstream's
 * counter rows as graph-node would answer them, each mismatch written out by hand from the fixture (not computed by
 * the code under test). The fixtures cross the day boundaries, hold another chain's rows, and leave a group out on
 * either side.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS, findDataset } from '../../src/catalog/catalog.ts';
import type { Params } from '../../src/store/sql-port.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { IDENTITIES, type Identity } from '../../src/verify/identities.ts';
import { type FoundValue, foundCounts, foundCountsOf, type Mismatch, reconcile } from '../../src/verify/reconcile.ts';

const D = 86_400;
/** Day 20000 (2024-10-04) and the two after it. */
const [D0, D1, D2] = [20_000 * D, 20_001 * D, 20_002 * D];
const BSC = 56;
const OTHER = 1;

let dir: string;
let w: Warehouse;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'verify-identities-'));
  w = await Warehouse.open(dir);
  await w.ensureTables(DATASETS.filter((d) => IDENTITIES.some((i) => i.dataset === d.name)));
});
afterAll(async () => {
  await w?.close();
  rmSync(dir, { recursive: true, force: true });
});

const identity = (name: string): Identity => IDENTITIES.find((i) => i.name === name)!;

/** Inserts rows (column → value) into a dataset's table. */
async function insert(dataset: string, rows: Record<string, string | number>[]): Promise<void> {
  const table = findDataset(dataset)!.table;
  for (const r of rows) {
    const cols = Object.keys(r);
    await w.exec(
      `INSERT INTO ${table} (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
      Object.values(r),
    );
  }
}

/** Reconciles an identity on chain 56 over days D0..D2 with the counter rows as the upstream answers them. */
async function check(
  name: string,
  upstream: Record<string, unknown>[],
): Promise<{ groups: number; mismatches: Mismatch[] }> {
  const id = identity(name);
  const ds = findDataset(id.dataset)!;
  const days = id.counter.byDay ? { first: D0, last: D2 } : undefined;
  const found = await foundCounts(w, { identity: id, ds, chainId: BSC, ...(days ? { days } : {}) });
  return reconcile(id, { chainId: BSC, counters: upstream.map((r) => id.counter.value(r)), found });
}

const miss = (name: string, m: Partial<Mismatch> & Pick<Mismatch, 'expected' | 'found'>): Mismatch => {
  const id = identity(name);
  return { chainId: BSC, dataset: id.dataset, identity: name, day: null, key: null, keyKind: id.keyKind ?? null, ...m };
};

describe('the identities of verify, each on a hand-written fixture', () => {
  it('swaps per pool and day: counts by the swap’s day, the last second of a day in it, the next day’s first second not', async () => {
    await insert(
      'dodoex.swaps',
      [
        { id: 's1', pair_id: '0xa', timestamp: D0 },
        { id: 's2', pair_id: '0xa', timestamp: D1 - 1 },
        { id: 's3', pair_id: '0xa', timestamp: D1 },
        { id: 's4', pair_id: '0xb', timestamp: D1 + 5 },
        // Another chain, and a day before the range: neither counts.
        { id: 's5', pair_id: '0xa', timestamp: D0 + 7, chain_id: OTHER },
        { id: 's6', pair_id: '0xa', timestamp: D0 - 1 },
        // A pool-day the upstream does not know (a row too many).
        { id: 's7', pair_id: '0xc', timestamp: D2 + 10 },
        // The first second after the last day checked.
        { id: 's8', pair_id: '0xb', timestamp: D2 + D },
      ].map((r) => ({ chain_id: BSC, ...r })),
    );
    const r = await check('swaps per pool and day', [
      { id: '0xa-20000', pairAddress: '0xa', date: D0, txns: '2' },
      { id: '0xa-20001', pairAddress: '0xa', date: D1, txns: '2' },
      { id: '0xb-20001', pairAddress: '0xb', date: D1, txns: '1' },
      { id: '0xb-20002', pairAddress: '0xb', date: D2, txns: '3' },
    ]);
    expect(r.groups).toBe(5);
    expect(r.mismatches).toEqual([
      miss('swaps per pool and day', { day: D1, key: '0xa', expected: 2, found: 1 }),
      miss('swaps per pool and day', { day: D2, key: '0xb', expected: 3, found: 0 }),
      miss('swaps per pool and day', { day: D2, key: '0xc', expected: 0, found: 1 }),
    ]);
  });

  it('pool day rows: one stored row per pool and day the upstream has', async () => {
    await insert(
      'dodoex.pair_day_datas',
      [
        { id: '0xa-20000', pair_address: '0xa', date: D0 },
        { id: '0xb-20002', pair_address: '0xb', date: D2 },
        { id: '0xb-20002', pair_address: '0xb', date: D2, chain_id: OTHER },
      ].map((r) => ({ chain_id: BSC, ...r })),
    );
    const r = await check('pool day rows', [
      { id: '0xa-20000', pairAddress: '0xa', date: D0, txns: '2' },
      { id: '0xa-20001', pairAddress: '0xa', date: D1, txns: '2' },
      { id: '0xb-20002', pairAddress: '0xb', date: D2, txns: '3' },
    ]);
    expect(r.mismatches).toEqual([miss('pool day rows', { day: D1, key: '0xa', expected: 1, found: 0 })]);
  });

  it('transactions per day: the day’s txCount against the day’s transactions', async () => {
    await insert(
      'dodoex.transactions',
      [
        { id: 't1', timestamp: D0 },
        { id: 't2', timestamp: D0 + D - 1 },
        { id: 't3', timestamp: D2 },
        { id: 't4', timestamp: D2, chain_id: OTHER },
        { id: 't5', timestamp: D2 + D },
        { id: 't6', timestamp: D0 - 1 },
      ].map((r) => ({ chain_id: BSC, ...r })),
    );
    const r = await check('transactions per day', [
      { id: '20000', date: D0, txCount: '2', uniqueUsersCount: '9' },
      { id: '20001', date: D1, txCount: '0', uniqueUsersCount: '0' },
      { id: '20002', date: D2, txCount: '3', uniqueUsersCount: '1' },
    ]);
    // An empty day (D1) agrees with no row.
    expect(r.groups).toBe(3);
    expect(r.mismatches).toEqual([miss('transactions per day', { day: D2, expected: 3, found: 1 })]);
  });

  it('user days per day: the day’s uniqueUsersCount against its user day rows', async () => {
    await insert(
      'dodoex.user_day_datas',
      [
        { id: 'u1-20000', date: D0 },
        { id: 'u2-20000', date: D0 },
        { id: 'u1-20002', date: D2 },
      ].map((r) => ({ chain_id: BSC, ...r })),
    );
    const r = await check('user days per day', [
      { id: '20000', date: D0, txCount: '2', uniqueUsersCount: '3' },
      { id: '20002', date: D2, txCount: '3', uniqueUsersCount: '1' },
    ]);
    expect(r.mismatches).toEqual([miss('user days per day', { day: D0, expected: 3, found: 2 })]);
  });

  it('exchange day rows: one per day the upstream has', async () => {
    await insert('dodoex.dodo_day_datas', [{ id: '20000', date: D0, chain_id: BSC }]);
    const r = await check('exchange day rows', [
      { id: '20000', date: D0, txCount: '2', uniqueUsersCount: '3' },
      { id: '20002', date: D2, txCount: '3', uniqueUsersCount: '1' },
    ]);
    expect(r.mismatches).toEqual([miss('exchange day rows', { day: D2, expected: 1, found: 0 })]);
  });

  it('token day rows: one per token and day, the token read from its reference', async () => {
    await insert(
      'dodoex.token_day_datas',
      [
        { id: '0xt-20000', token_id: '0xt', date: D0 },
        { id: '0xu-20001', token_id: '0xu', date: D1 },
      ].map((r) => ({ chain_id: BSC, ...r })),
    );
    const r = await check('token day rows', [
      { id: '0xt-20000', date: D0, token: { id: '0xt' } },
      { id: '0xt-20001', date: D1, token: { id: '0xt' } },
    ]);
    expect(r.mismatches).toEqual([
      miss('token day rows', { day: D1, key: '0xt', expected: 1, found: 0 }),
      miss('token day rows', { day: D1, key: '0xu', expected: 0, found: 1 }),
    ]);
  });

  it('tokens and users: the exchange’s totals against the whole tables of the chain', async () => {
    await insert('dodoex.tokens', [
      { id: '0xt', chain_id: BSC },
      { id: '0xu', chain_id: BSC },
      { id: '0xt', chain_id: OTHER },
    ]);
    await insert('dodoex.users', [{ id: '0x1', chain_id: BSC }]);
    const zoo = [{ id: 'dodoex-v2-bsc', tokenCount: '2', uniqueUsersCount: '4' }];
    expect((await check('tokens', zoo)).mismatches).toEqual([]);
    expect((await check('users', zoo)).mismatches).toEqual([miss('users', { key: null, expected: 4, found: 1 })]);
  });

  it('bid positions per crowd pool: a removed pool’s positions are not compared', async () => {
    await insert(
      'dodoex.bid_positions',
      [
        { id: 'a-cp1', cp_id: 'cp1' },
        { id: 'b-cp1', cp_id: 'cp1' },
        { id: 'a-cp2', cp_id: 'cp2' },
        // cp9 is no longer upstream (handleRemoveCP): its position stays and is not a mismatch.
        { id: 'a-cp9', cp_id: 'cp9' },
      ].map((r) => ({ chain_id: BSC, ...r })),
    );
    const r = await check('bid positions per crowd pool', [
      { id: 'cp1', investorsCount: '2' },
      { id: 'cp2', investorsCount: '3' },
      { id: 'cp3', investorsCount: '0' },
    ]);
    expect(r.groups).toBe(3);
    expect(r.mismatches).toEqual([miss('bid positions per crowd pool', { key: 'cp2', expected: 3, found: 1 })]);
  });

  it('factory tokens: DodoToken.tokens against the token schema’s tokens', async () => {
    await insert('token.tokens', [
      { id: '0xe1', chain_id: BSC },
      { id: '0xe2', chain_id: BSC },
    ]);
    expect((await check('factory tokens', [{ id: 'DODO-Token', tokens: '2' }])).mismatches).toEqual([]);
    expect((await check('factory tokens', [{ id: 'DODO-Token', tokens: '5' }])).mismatches).toEqual([
      miss('factory tokens', { expected: 5, found: 2 }),
    ]);
  });

  it('counts several chains in one statement, each over its own days', async () => {
    const [A, B] = [7001, 7002];
    await insert('dodoex.swaps', [
      { id: 'a1', pair_id: '0xa', timestamp: D0 + 1, chain_id: A },
      { id: 'a2', pair_id: '0xa', timestamp: D1 + 1, chain_id: A },
      { id: 'a3', pair_id: '0xb', timestamp: D2 + 1, chain_id: A },
      { id: 'b1', pair_id: '0xa', timestamp: D0 + 2, chain_id: B },
      { id: 'b2', pair_id: '0xa', timestamp: D2 + 2, chain_id: B },
      { id: 'b3', pair_id: '0xc', timestamp: D1 + 2, chain_id: B },
      { id: 'b4', pair_id: '0xc', timestamp: D1 + 3, chain_id: B },
    ]);
    let statements = 0;
    const counting = {
      all: (sql: string, params?: Params) => {
        statements++;
        return w.all(sql, params);
      },
    };
    const id = identity('swaps per pool and day');
    const found = await foundCountsOf(counting, { identity: id, ds: findDataset(id.dataset)! }, [
      { chainId: A, days: { first: D0, last: D0 } },
      { chainId: B, days: { first: D1, last: D2 } },
    ]);
    const sorted = (xs: readonly FoundValue[] | undefined) => [...(xs ?? [])].sort((x, y) => x.day! - y.day!);
    expect(statements).toBe(1);
    // Chain A on day D0 alone: a1. Chain B on D1 and D2: b3 and b4 (one pool-day), b2; b1 is before its days.
    expect(sorted(found.get(A))).toEqual([{ key: '0xa', day: D0, found: 1 }]);
    expect(sorted(found.get(B))).toEqual([
      { key: '0xc', day: D1, found: 2 },
      { key: '0xa', day: D2, found: 1 },
    ]);
  });

  it('names its mapping source for every identity', () => {
    for (const i of IDENTITIES)
      expect(i.source, i.name).toMatch(/^DODOEX\/dodoex_v2_subgraph@0eb5baca src\/mappings\/\S+\.ts \w+/);
  });
});
