/**
 * Every report view against an independent oracle: the figures recomputed in TypeScript with decimal.js from the
 * sandbox's own rows (test/support/oracle.ts), never by running the view's SQL. Each compares every row of a chain,
 * so the edges (first and last days, pools with one trusted side, none, both) are all in. Tolerance: 1e-9 relative.
 * This file: TVL and tracked figures; volume, pool, position and crowd-pool reports are in reports-volume.int.test.ts.
 */

import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { reportViews } from '../../src/reports/views.ts';
import { cli } from '../support/cli-process.ts';
import {
  CHAIN,
  dayOracle,
  env,
  list,
  listTvl,
  raw,
  report,
  snapshotDay,
  useExportedReports,
} from '../support/exported-reports.ts';
import { D, dayOf, expectClose, matchRows, tokenValue, trusted } from '../support/oracle.ts';

useExportedReports();

describe('TVL reports', () => {
  it("tvl_daily: tracked and untracked value of every pool day, the service's TVL of that day and the difference", async () => {
    const svc = new Map(list.map((i) => [`${snapshotDay()}/${i.id}`, D(i.pair.tvl)]));
    const { pools } = dayOracle();
    const exact = new Map(
      raw.PairDayData!.map((d) => {
        const base = D(d.baseTokenReserve).times(D(d.baseUsdPrice));
        const quote = D(d.quoteTokenReserve).times(D(d.quoteUsdPrice));
        const key = `${dayOf(d.date)}/${d.pairAddress}`;
        return [key, { tracked: pools.get(key)!, untracked: base.plus(quote) }];
      }),
    );
    const rows = await report('tvl_daily');
    // Every combination of trusted sides is in the data: both, base only, quote only, neither.
    const cases = new Set(
      raw.PairDayData!.map((d) => `${trusted(CHAIN, d.baseToken)}/${trusted(CHAIN, d.quoteToken)}`),
    );
    expect([...cases].sort()).toEqual(['false/false', 'false/true', 'true/false', 'true/true']);
    let withService = 0;
    let oneSided = 0;
    for (const [r, e] of matchRows(rows, exact, (x) => `${x.day}/${x.pool}`, 'tvl_daily')) {
      expectClose(r.tvl_usd, e.tracked, `tracked ${r.pool} ${r.day}`);
      expectClose(r.tvl_untracked_usd, e.untracked, `untracked ${r.pool} ${r.day}`);
      const service = svc.get(`${r.day}/${r.pool}`);
      if (service) {
        withService++;
        expectClose(r.tvl_service_usd, service, `service ${r.pool}`);
        expectClose(r.difference_usd, service.minus(e.tracked), `difference ${r.pool}`);
      } else expect(r.tvl_service_usd).toBeNull();
      if (!e.tracked.isZero() && !e.tracked.eq(e.untracked)) oneSided++;
    }
    expect(withService).toBeGreaterThan(0);
    expect(oneSided).toBeGreaterThan(0);
  });

  it("tvl_list and top_pools: tracked, untracked and the service's TVL at the snapshot; ranked by tracked TVL", async () => {
    const exact = listTvl();
    const rows = await report('tvl_list');
    for (const [r, e] of matchRows(rows, exact, (x) => x.pool, 'tvl_list')) {
      expectClose(r.tvl_usd, e.tracked, `tracked ${r.pool}`);
      expectClose(r.tvl_untracked_usd, e.untracked, `untracked ${r.pool}`);
      expectClose(r.tvl_service_usd, D(e.item.pair.tvl), `service ${r.pool}`);
      expect(r.tvl_service_text).toBe(e.item.pair.tvl);
    }
    const ranked = [...exact]
      .sort((a, b) => b[1].tracked.comparedTo(a[1].tracked) || (a[0] < b[0] ? -1 : 1))
      .map(([id]) => id);
    const top = (await report('top_pools')).sort((a, b) => a.rank - b.rank);
    expect(top.map((r) => r.pool)).toEqual(ranked);
    // The first pool is not the one with the largest untracked value: one price does not decide the ranking.
    const byUntracked = [...exact].sort((a, b) => b[1].untracked.comparedTo(a[1].untracked))[0]![0];
    expect(top[0]!.pool).not.toBe(byUntracked);
  });

  it('tvl_by_chain_type: pools and the sums of tracked and untracked TVL per pool type', async () => {
    const exact = new Map<string, { pools: number; tracked: Decimal; untracked: Decimal }>();
    for (const e of listTvl().values()) {
      const t = e.item.pair.type as string;
      const a = exact.get(t) ?? { pools: 0, tracked: D(0), untracked: D(0) };
      exact.set(t, {
        pools: a.pools + 1,
        tracked: a.tracked.plus(e.tracked),
        untracked: a.untracked.plus(e.untracked),
      });
    }
    for (const [r, e] of matchRows(await report('tvl_by_chain_type'), exact, (x) => x.pool_type, 'tvl_by_chain_type')) {
      expect(r.pools).toBe(e.pools);
      expectClose(r.tvl_usd, e.tracked, `tracked ${r.pool_type}`);
      expectClose(r.tvl_untracked_usd, e.untracked, `untracked ${r.pool_type}`);
    }
  });

  it('tvl_by_token: value per token and day, at the derived price for an untrusted token, at most its backing', async () => {
    const { tokens } = dayOracle();
    let derived = 0;
    let bounded = 0;
    for (const [r, e] of matchRows(
      await report('tvl_by_token'),
      tokens,
      (x) => `${x.day}/${x.token}`,
      'tvl_by_token',
    )) {
      expectClose(r.reserve, e.reserve, `reserve ${r.token}`);
      expectClose(r.tvl_untracked_usd, e.untracked, `untracked ${r.token}`);
      expectClose(r.tvl_usd, tokenValue(e), `tracked ${r.token} ${r.day}`);
      if (e.price === null) expect(r.price_usd, `price ${r.token} ${r.day}`).toBeNull();
      else expectClose(r.price_usd, e.price, `price ${r.token} ${r.day}`);
      if (!e.trusted && e.price !== null) {
        derived++;
        if (e.reserve.times(e.price).gt(e.backing)) bounded++;
      }
    }
    // Both rules are at work on the sandbox's data: derived prices, and the bound (the 1e30-scale scam pool's tokens).
    expect(derived).toBeGreaterThan(0);
    expect(bounded).toBeGreaterThan(0);
  });

  it('suspicious_pools: pools whose claimed TVL is over ten times the tracked one, with the untrusted token behind it', async () => {
    const exact = new Map(
      [...listTvl()].flatMap(([id, e]) => {
        const claimed = Decimal.max(e.untracked, D(e.item.pair.tvl));
        if (claimed.lt(10_000) || claimed.lte(e.tracked.times(10))) return [];
        const sides = [
          ['base', e.base],
          ['quote', e.quote],
        ] as const;
        const suspect = sides
          .filter(([s]) => !trusted(CHAIN, e.item.pair[`${s}Token`].id))
          .sort((a, b) => b[1].comparedTo(a[1]))[0]!;
        return [[id, { ...e, claimed, suspect: e.item.pair[`${suspect[0]}Token`] }]];
      }),
    );
    const rows = await report('suspicious_pools');
    expect(rows.length).toBeGreaterThan(0);
    for (const [r, e] of matchRows(rows, exact, (x) => x.pool, 'suspicious_pools')) {
      expectClose(r.tvl_usd, e.tracked, `tracked ${r.pool}`);
      expect([r.suspect_token, r.suspect_symbol]).toEqual([e.suspect.id, e.suspect.symbol]);
      expectClose(r.suspect_price_usd, D(e.suspect.usdPrice), `price ${r.pool}`);
      if (e.tracked.isZero()) expect(r.times_tracked).toBeNull();
      else expectClose(r.times_tracked, e.claimed.div(e.tracked), `times ${r.pool}`);
    }
  });

  it('suspicious_tokens: untrusted tokens whose upstream price is over 10 times off the derived one', async () => {
    const { tokens } = dayOracle();
    const exact = new Map(
      [...tokens].filter(
        ([, t]) =>
          !t.trusted && t.price?.gt(0) && (t.upstream.gt(t.price.times(10)) || t.upstream.times(10).lt(t.price)),
      ),
    );
    const rows = await report('suspicious_tokens');
    // The sandbox's pumped token (its usdPrice set 1e24 times too high on some days) is among them.
    expect(rows.length).toBeGreaterThan(0);
    for (const [r, e] of matchRows(rows, exact, (x) => `${x.day}/${x.token}`, 'suspicious_tokens')) {
      expectClose(r.upstream_price_usd, e.upstream, `upstream ${r.token} ${r.day}`);
      expectClose(r.derived_price_usd, e.price!, `derived ${r.token} ${r.day}`);
      expectClose(r.times_derived, e.upstream.div(e.price!), `times ${r.token} ${r.day}`);
    }
  });
});

describe('tracked figures at scale', () => {
  it('every tracked USD column of every report stays below 1e13 on every row, while the untracked ones pass 1e30', async () => {
    const largest = async (sql: string) => {
      const r = await cli(['query', '--format', 'json', sql], env);
      expect(r.code, r.stderr).toBe(0);
      return Number((JSON.parse(r.stdout) as { m: number | null }[])[0]!.m ?? 0);
    };
    const columns = await cli(
      [
        'query',
        '--format',
        'json',
        "SELECT table_name AS view, column_name AS c FROM information_schema.columns WHERE table_schema = 'reports' AND column_name IN ('tvl_usd', 'volume_usd', 'fees_usd') ORDER BY 1, 2",
      ],
      env,
    );
    const names = new Set(reportViews().map((v) => v.name));
    const tracked = (JSON.parse(columns.stdout) as { view: string; c: string }[])
      .filter((x) => names.has(x.view))
      .map((x) => `${x.view}.${x.c}`);
    const union = tracked
      .map((vc) => `SELECT '${vc}' AS k, max(abs(${vc.split('.')[1]})) AS m FROM reports.${vc.split('.')[0]}`)
      .join(' UNION ALL ');
    const maxima = await cli(['query', '--format', 'json', union], env);
    const rows = JSON.parse(maxima.stdout) as { k: string; m: number | null }[];
    expect(rows.map((r) => r.k)).toEqual(tracked);
    for (const { k, m } of rows) expect(Number(m ?? 0), k).toBeLessThan(1e13);
    expect(tracked).toEqual(
      expect.arrayContaining([
        'tvl_by_token.tvl_usd',
        'volume_by_token.volume_usd',
        'smart_route_volume.volume_usd',
        'top_pools.tvl_usd',
      ]),
    );
    // The hostile data is there: the same views' untracked figures.
    expect(await largest('SELECT max(tvl_untracked_usd) AS m FROM reports.tvl_by_token')).toBeGreaterThan(1e30);
    expect(await largest('SELECT max(tvl_untracked_usd) AS m FROM reports.tvl_daily')).toBeGreaterThan(1e30);
  });
});
