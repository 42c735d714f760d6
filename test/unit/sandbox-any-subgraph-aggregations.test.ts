/**
 * The sandbox serves an aggregation of any schema as graph-node would: each interval's rows, asked over HTTP, checked
 * against a roll-up of the timeseries' own rows (`/_sandbox/rows`) computed here.
 */

import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { gql, head, type Row, rows, sb, urls, useAnySubgraphSandbox } from '../support/any-subgraph-sandbox.ts';

useAnySubgraphSandbox();

/** Every row of an aggregation at one interval and block, paged by the (timestamp, id) descending keyset. */
async function servedStats(url: string, interval: string, block: number, since?: number): Promise<Row[]> {
  const sel =
    'id timestamp token { id } ticks volume sumPriceUSD lowUSD highUSD openUSD closeUSD totalTicks totalVolume';
  const changed = since === undefined ? '' : `, _change_block: { number_gte: ${since} }`;
  const out: Row[] = [];
  let last: Row | undefined;
  for (;;) {
    const where = last
      ? `{ or: [{ timestamp_lt: "${last.timestamp}"${changed} }, { timestamp: "${last.timestamp}", id_lt: "${last.id}"${changed} }] }`
      : `{ ${changed.slice(2)} }`;
    const page = await gql<{ s: Row[] }>(
      url,
      `{ s: tokenPriceStats(interval: ${interval}, first: 1000, block: { number: ${block} }, where: ${where}) { ${sel} } }`,
    );
    out.push(...page.s);
    if (page.s.length < 1000) return out;
    last = page.s[page.s.length - 1];
  }
}

/**
 * The oracle: graph-node's rollup (rollup.rs) done again here with decimal.js over the timeseries' own rows: a bucket per
 * hour or day from the epoch and token, the buckets that ended by the block's time, id the largest of its rows, first
 * and last by id, cumulative aggregates over the token's earlier buckets; BigDecimal printed to 34 significant digits.
 */
function rollUp(ticks: Row[], secs: number, now: number): Record<string, unknown>[] {
  const D = Decimal.clone({ precision: 200 });
  const text = (d: Decimal) => new D(d).toSignificantDigits(34, Decimal.ROUND_HALF_UP).toFixed();
  const groups = new Map<string, Row[]>();
  for (const t of [...ticks].sort((a, b) => Number(a.id) - Number(b.id))) {
    const start = Math.floor(Number(BigInt(String(t.timestamp)) / 1_000_000n) / secs) * secs;
    if (start + secs > now) continue;
    const key = `${start}|${t.token}`;
    groups.set(key, [...(groups.get(key) ?? []), t]);
  }
  const total = new Map<string, { ticks: bigint; volume: bigint }>();
  const out: Record<string, unknown>[] = [];
  for (const [key, g] of [...groups].sort((a, b) => Number(a[0].split('|')[0]) - Number(b[0].split('|')[0]))) {
    const [start, token] = key.split('|') as [string, string];
    const prices = g.map((t) => new D(String(t.priceUSD)));
    const volume = g.reduce((s, t) => s + BigInt(String(t.amount)), 0n);
    const before = total.get(token) ?? { ticks: 0n, volume: 0n };
    const after = { ticks: before.ticks + BigInt(g.length), volume: before.volume + volume };
    total.set(token, after);
    out.push({
      id: g[g.length - 1]!.id,
      timestamp: `${start}000000`,
      token: { id: token },
      ticks: String(g.length),
      volume: String(volume),
      sumPriceUSD: text(prices.reduce((s, p) => s.plus(p), new D(0))),
      lowUSD: text(D.min(...prices)),
      highUSD: text(D.max(...prices)),
      openUSD: text(prices[0]!),
      closeUSD: text(prices[prices.length - 1]!),
      totalTicks: String(after.ticks),
      totalVolume: String(after.volume),
    });
  }
  return out;
}

describe('an aggregation of any schema in the sandbox', () => {
  it('rolls up the timeseries per hour and day as graph-node does, served by timestamp then id, descending', async () => {
    const url = urls[0]!;
    const meta = async (block: number) =>
      (
        await gql<{ _meta: { block: { timestamp: number } } }>(
          url,
          `{ _meta(block: { number: ${block} }) { block { timestamp } } }`,
        )
      )._meta.block.timestamp;
    const at = await head(url);
    const ticks = await rows('PriceTick', '1', at);
    for (const [interval, secs] of [
      ['hour', 3600],
      ['day', 86400],
    ] as const) {
      const served = await servedStats(url, interval, at);
      const oracle = rollUp(ticks, secs, await meta(at));
      expect(served.length).toBeGreaterThan(interval === 'hour' ? 100 : 20);
      // Served newest first: timestamp descending, then id descending.
      const order = (r: Record<string, unknown>) => [BigInt(String(r.timestamp)), BigInt(String(r.id))] as const;
      for (let i = 1; i < served.length; i++) {
        const [t0, i0] = order(served[i - 1]!);
        const [t1, i1] = order(served[i]!);
        expect(t0 > t1 || (t0 === t1 && i0 > i1)).toBe(true);
      }
      const byId = (a: Record<string, unknown>, b: Record<string, unknown>) => Number(a.id) - Number(b.id);
      expect([...served].sort(byId)).toEqual(oracle.sort(byId));
      // The aggregation's own rows (`/_sandbox/rows?interval=`) are the same.
      const res = await fetch(
        `${sb.url}/_sandbox/rows?subgraph=pools&entity=TokenPriceStat&interval=${interval}&chainId=1&block=${at}`,
      );
      const own = (await res.text()).split('\n').filter(Boolean);
      expect(own.length).toBe(served.length);
    }
    // Cumulative figures carry on over buckets with no tick of the token in between.
    const hours = await servedStats(url, 'hour', at);
    expect(hours.some((r) => Number(r.totalTicks) > Number(r.ticks))).toBe(true);
    // An earlier block holds only the buckets that ended by its time; `_change_block` gives those written since.
    // The block that ends an hour (the first whose time is past it), found by bisection: its buckets are written there.
    const tick = ticks[Math.floor(ticks.length * 0.9)]!;
    const hourEnd = (Math.floor(Number(BigInt(String(tick.timestamp)) / 1_000_000n) / 3600) + 1) * 3600;
    let [lo, hi] = [tick.__block, at];
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if ((await meta(mid)) >= hourEnd) hi = mid;
      else lo = mid + 1;
    }
    const earlier = lo;
    const then = await servedStats(url, 'hour', earlier - 1);
    expect([...then].sort((a, b) => Number(a.id) - Number(b.id))).toEqual(
      rollUp(await rows('PriceTick', '1', earlier - 1), 3600, await meta(earlier - 1)).sort(
        (a, b) => Number(a.id) - Number(b.id),
      ),
    );
    const since = await servedStats(url, 'hour', at, earlier);
    const old = new Set(then.map((r) => r.id));
    expect(since.map((r) => r.id).sort()).toEqual(
      hours
        .filter((r) => !old.has(r.id))
        .map((r) => r.id)
        .sort(),
    );
    expect(since.length).toBeGreaterThan(0);
    // And those written at that very block are not among the ones written after it.
    const atEnd = new Set((await servedStats(url, 'hour', earlier)).map((r) => r.id));
    expect(atEnd.size).toBeGreaterThan(old.size);
    const after = await servedStats(url, 'hour', at, earlier + 1);
    expect(after.map((r) => r.id).sort()).toEqual(
      hours
        .filter((r) => !atEnd.has(r.id))
        .map((r) => r.id)
        .sort(),
    );
    // An interval the aggregation does not have, and a missing one, are errors.
    await expect(gql(url, '{ tokenPriceStats(first: 1) { id } }')).rejects.toThrow(
      /argument "interval" of type "Aggregation_interval!" is required/,
    );
    await expect(gql(url, '{ tokenPriceStats(interval: hour, orderBy: id) { id } }')).rejects.toThrow(
      /Unknown argument "orderBy"/,
    );
  });
});
