/**
 * A real export of one chain of the sandbox for the report tests (test/integration/reports*.int.test.ts), with the
 * sandbox's own rows and its liquidity list read beside it, and how the tests read a report and the oracle's inputs.
 * `sb`, `dir`, `env`, `raw` and `list` are live bindings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Decimal } from 'decimal.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { cli, sandboxEnv } from './cli-process.ts';
import { byPool, D, dayOf, daySides, listSides, poolTracked, type TokenDay, tokenDays } from './oracle.ts';
import { allRows, post } from './sandbox-client.ts';

export const CHAIN = 56;
export let sb: SandboxProcess;
export let dir: string;
export let env: Record<string, string>;
/** Raw rows of the chain, as the sandbox serves them. */
export let raw: Record<string, Record<string, any>[]>;
/** The chain's liquidity-list items at the snapshot. */
export let list: Record<string, any>[];

/** Every row of a report for the chain, as JSON. */
export async function report(name: string): Promise<Record<string, any>[]> {
  const r = await cli(['report', name, '--chain', 'bsc', '--format', 'json'], env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, any>[];
}

/** The snapshot's day (the head's). */
export const snapshotDay = () =>
  raw
    .Swap!.map((s) => dayOf(s.timestamp))
    .sort()
    .at(-1)!;

/** Tracked, untracked and service TVL of each list item. */
export function listTvl(): Map<
  string,
  { item: Record<string, any>; tracked: Decimal; untracked: Decimal; base: Decimal; quote: Decimal }
> {
  const sides = listSides(CHAIN, snapshotDay(), list);
  const tokens = tokenDays(sides);
  const pools = byPool(sides);
  return new Map(
    list.map((i) => {
      const p = i.pair;
      const base = D(p.baseReserve).times(D(p.baseToken.usdPrice));
      const quote = D(p.quoteReserve).times(D(p.quoteToken.usdPrice));
      return [
        i.id as string,
        {
          item: i,
          base,
          quote,
          untracked: base.plus(quote),
          tracked: poolTracked(pools.get(`${snapshotDay()}/${i.id}`)!, tokens),
        },
      ];
    }),
  );
}

/** Every token's tracked price and backing per day (`<day>/<token>`), and every pool's tracked value (`<day>/<pool>`). */
export function dayOracle(): { tokens: Map<string, TokenDay>; pools: Map<string, Decimal> } {
  const sides = daySides(CHAIN, raw.PairDayData!);
  const tokens = tokenDays(sides);
  return { tokens, pools: new Map([...byPool(sides)].map(([k, pair]) => [k, poolTracked(pair, tokens)])) };
}

/** A sandbox into a new day, a folder exported from it and its raw rows, before the calling file's tests; gone after them. */
export function useExportedReports(): void {
  beforeAll(async () => {
    sb = await startSandbox(['--scale', '3000', '--chains', '56']);
    // Into the new day, so that the day's data and the snapshot meet on one day.
    await sb.control('advance', { blocks: 1200 });
    dir = mkdtempSync(join(tmpdir(), 'pool-export-reports-'));
    env = sandboxEnv(sb, join(dir, 'data'));
    const r = await cli(['run', '--chains', 'bsc'], env);
    if (r.code !== 0) throw new Error(r.stdout + r.stderr);
    raw = {};
    for (const e of [
      'PairDayData',
      'PairHourData',
      'TokenDayData',
      'Token',
      'Pair',
      'Swap',
      'OrderHistory',
      'LiquidityPosition',
      'CrowdPooling',
      'CrowdPoolingDayData',
    ]) {
      raw[e] = await allRows(sb, CHAIN, 'dodoex', e);
    }
    const types = '["CLASSICAL", "DVM", "DSP", "GSP", "DPP", "AMMV2", "AMMV3"]';
    const query = `{ liquidity_list(where: { chainIds: [${CHAIN}], pageSize: 1000, filterState: { filterTypes: ${types} } }) { lqList { id pair { type tvl baseReserve quoteReserve lastTradePrice baseToken { id symbol usdPrice } quoteToken { id symbol usdPrice } apy { transactionBaseApy transactionQuoteApy miningBaseApy miningQuoteApy } } } } }`;
    list = (await post(sb, `/graphql?opname=FetchLiquidityList&apikey=${sb.apiKey}`, { query })).body.data!
      .liquidity_list.lqList;
  });
  afterAll(async () => {
    await sb?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
}
