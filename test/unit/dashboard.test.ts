/**
 * The dashboard's figures and page, made in-process from a lake that a real run wrote (from the tier's shared
 * sandbox). Each figure is checked against the report view's own rows, aggregated here in TypeScript (sums per chain
 * and day, the last known TVL of a pool), never by the dashboard's SQL. Tolerance: 1e-9 relative (sums of doubles).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { JOBS } from '../../jobs/index.ts';
import { loadConfig } from '../../src/config/config.ts';
import { buildPlan } from '../../src/export/routing/plan.ts';
import { runOnce } from '../../src/pipeline/run.ts';
import { writeDashboard } from '../../src/reports/dashboard.ts';
import { type DashboardData, dashboardData } from '../../src/reports/dashboard-data.ts';
import type { DashboardFilter } from '../../src/reports/dashboard-filter.ts';
import { escapeHtml, scriptJson, usd } from '../../src/reports/dashboard-page.ts';
import { openLakeDb } from '../../src/reports/views.ts';
import { callControl, type SandboxEndpoint } from '../../src/sandbox/spawn.ts';
import { sandboxEnv } from '../support/cli-process.ts';

const CHAIN = 56;
const DATASETS = [
  'list.liquidity',
  'dodoex.pair_day_datas',
  'dodoex.token_day_datas',
  'dodoex.swaps',
  'dodoex.pairs',
  'dodoex.tokens',
];
let root: string;
let data: string;
/** The report views' rows, read directly. */
let views: Record<string, Record<string, unknown>[]>;
/**
 * The unfiltered figures, made afresh by each test that reads them: a memo would record the making under the first
 * test only, and mutation testing would then run only that test against the code that makes them.
 */
const allFigures = () => figuresOf({});

beforeAll(async () => {
  const { url, apiKey } = inject('sharedSandbox');
  const sb: SandboxEndpoint = { url, apiKey, control: (p, b) => callControl(url, p, b) };
  root = mkdtempSync(join(tmpdir(), 'pool-export-dashboard-'));
  data = join(root, 'data');
  const config = loadConfig({ env: sandboxEnv(sb, data), overrides: { chains: [String(CHAIN)] } });
  const outcome = await runOnce({
    config,
    tasks: buildPlan(config, { jobs: JOBS, chains: [CHAIN], datasets: DATASETS }),
    jobs: [],
    signal: new AbortController().signal,
    log: () => {},
    waitLockSecs: 0,
  });
  if (outcome.results.some((r) => r.status !== 'ok')) throw new Error('the export failed');
  const db = await openLakeDb(data);
  try {
    views = {};
    for (const v of ['tvl_daily', 'volume_daily', 'top_pools', 'apy', 'volume_by_token'])
      views[v] = (
        await db.conn.runAndReadAll(`SELECT * EXCLUDE (day), day::VARCHAR AS day FROM reports.${v}`)
      ).getRowObjectsJson();
  } finally {
    db.close();
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const close = (a: number | null, b: number | null, what: string): void => {
  if (a === null || b === null) {
    expect(a, what).toBe(b);
    return;
  }
  expect(Math.abs(a - b), `${what}: ${a} vs ${b}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(b)));
};
const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));

async function figuresOf(filter: DashboardFilter): Promise<DashboardData> {
  const db = await openLakeDb(data);
  try {
    return await dashboardData(db.conn, data, { filter, now: new Date('2026-01-01T00:00:00Z') });
  } finally {
    db.close();
  }
}

describe('the dashboard figures', () => {
  it('volume per chain and day is the sum of volume_daily over the pools', async () => {
    const figures = await allFigures();
    const sums = new Map<string, number>();
    for (const r of views.volume_daily!)
      sums.set(String(r.day), (sums.get(String(r.day)) ?? 0) + (n(r.volume_usd) ?? 0));
    expect(figures.volume.days).toEqual([...sums.keys()].sort());
    expect(figures.volume.series.map((s) => [s.chain, s.chainId])).toEqual([['bsc', CHAIN]]);
    for (const [i, d] of figures.volume.days.entries()) close(figures.volume.series[0]!.values[i]!, sums.get(d)!, d);
  });

  it('TVL per chain and day counts each pool seen by then with its latest tvl_daily row', async () => {
    const figures = await allFigures();
    const rows = views.tvl_daily!;
    const days = [...new Set(rows.map((r) => String(r.day)))].sort();
    expect(figures.tvl.days).toEqual(days);
    const pools = [...new Set(rows.map((r) => String(r.pool)))];
    let checkedCarried = 0;
    days.forEach((d, i) => {
      let sum = 0;
      let any = false;
      for (const p of pools) {
        const last = rows
          .filter((r) => r.pool === p && String(r.day) <= d)
          .sort((a, b) => String(b.day).localeCompare(String(a.day)))[0];
        if (!last) continue;
        if (last.day !== d) checkedCarried++;
        if (last.tvl_usd !== null) {
          sum += Number(last.tvl_usd);
          any = true;
        }
      }
      close(figures.tvl.series[0]!.values[i]!, any ? sum : null, d);
    });
    // The carried-forward rule was exercised: some pools had no row on some days.
    expect(checkedCarried).toBeGreaterThan(0);
  });

  it('top pools are top_pools by tracked TVL, with the latest fee APY and the tvl_daily line of each', async () => {
    const figures = await allFigures();
    const expected = [...views.top_pools!]
      .sort(
        (a, b) =>
          (n(b.tvl_usd) ?? -Infinity) - (n(a.tvl_usd) ?? -Infinity) || String(a.pool).localeCompare(String(b.pool)),
      )
      .slice(0, 10);
    expect(figures.topPools.map((p) => p.pool)).toEqual(expected.map((r) => r.pool));
    for (const [i, p] of figures.topPools.entries()) {
      const r = expected[i]!;
      close(p.tvlUsd, n(r.tvl_usd), `tvl ${p.pool}`);
      close(p.tvlServiceUsd, n(r.tvl_service_usd), `service tvl ${p.pool}`);
      close(p.serviceApy, n(r.transaction_base_apy), `apy ${p.pool}`);
      const apyRows = views
        .apy!.filter((a) => a.pool === p.pool)
        .sort((a, b) => String(b.day).localeCompare(String(a.day)));
      close(p.feeApy, apyRows.length ? n(apyRows[0]!.fee_apy) : null, `fee apy ${p.pool}`);
      const line = views
        .tvl_daily!.filter((t) => t.pool === p.pool)
        .sort((a, b) => String(a.day).localeCompare(String(b.day)));
      expect(p.spark.days).toEqual(line.map((t) => t.day));
      for (const [j, v] of p.spark.values.entries()) close(v, n(line[j]!.tvl_usd), `line ${p.pool}`);
    }
  });

  it('volume by token sums volume_by_token over the days, largest first', async () => {
    const figures = await allFigures();
    const sums = new Map<string, { v: number; symbol: unknown }>();
    for (const r of views.volume_by_token!) {
      const k = String(r.token);
      sums.set(k, { v: (sums.get(k)?.v ?? 0) + (n(r.volume_usd) ?? 0), symbol: r.symbol });
    }
    const top = [...sums.entries()]
      .filter(([, s]) => s.v > 0)
      .sort((a, b) => b[1].v - a[1].v)
      .slice(0, 15);
    expect(figures.tokens.map((t) => t.token)).toEqual(top.map(([t]) => t));
    for (const [i, t] of figures.tokens.entries()) close(t.volumeUsd, top[i]![1].v, t.token);
  });

  it('the filter keeps only the days and chains asked for', async () => {
    const figures = await allFigures();
    const days = figures.volume.days;
    const from = days[1]!;
    const to = days.at(-2)!;
    const some = await figuresOf({ from, to, chains: [CHAIN] });
    expect(some.volume.days).toEqual(days.filter((d) => d >= from && d <= to));
    expect(some.tvl.days.every((d) => d >= from && d <= to)).toBe(true);
    // The TVL of a day does not depend on the window: earlier days still carry their pools forward.
    const at = figures.tvl.days.indexOf(from);
    close(some.tvl.series[0]!.values[0]!, figures.tvl.series[0]!.values[at]!, `tvl on ${from}`);
    const none = await figuresOf({ chains: [1] });
    expect([none.volume.days, none.tvl.days, none.topPools, none.tokens]).toEqual([[], [], [], []]);
  });

  it('freshness comes from the status file, per dataset and chain', async () => {
    const figures = await allFigures();
    expect(figures.freshness.map((f) => f.dataset).sort()).toEqual([...DATASETS].sort());
    for (const f of figures.freshness) {
      expect(f.chainId).toBe(CHAIN);
      expect(f.lastStatus).toBe('ok');
      expect(f.lagSecs).toBe(Math.round((Date.parse('2026-01-01T00:00:00Z') - Date.parse(f.blockTime!)) / 1000));
    }
  });
});

describe('the dashboard page', () => {
  it('holds the figures as inert JSON, the tables escaped, and no address to fetch', async () => {
    const figures = await allFigures();
    const out = join(root, 'dash.html');
    const r = await writeDashboard(data, out);
    expect(r.empty).toBe(false);
    const html = readFileSync(out, 'utf8');
    expect(r.bytes).toBe(Buffer.byteLength(html));
    const json = /<script type="application\/json" id="dashboard-data">(.*?)<\/script>/s.exec(html)![1]!;
    expect(json).not.toContain('<');
    const shown = JSON.parse(json) as DashboardData;
    expect(shown.topPools.map((p) => p.pool)).toEqual(figures.topPools.map((p) => p.pool));
    // Every pool of the table is there, escaped, with its tracked TVL as people read it.
    for (const p of shown.topPools) {
      expect(html).toContain(`data-pool="${escapeHtml(p.pool)}"`);
      expect(html).toContain(`>${usd(p.tvlUsd)}<`);
    }
    expect(html).toMatch(/Content-Security-Policy" content="default-src 'none'/);
    // No element outside the scripts' bodies loads anything (the CSP forbids it anyway).
    const markup = html.replace(/(<script[^>]*>)[\s\S]*?<\/script>/g, '$1</script>');
    expect(markup.match(/<script[^>]*>/g)).toEqual([
      '<script type="application/json" id="dashboard-data">',
      '<script>',
      '<script>',
    ]);
    expect(markup).not.toMatch(/<(script|link|img|iframe)[^>]+(src|href)=/i);
    for (const part of ['tvl', 'volume', 'top-pools', 'apy', 'tokens', 'freshness'])
      expect(html).toContain(`data-part="${part}"`);
  });

  it('an empty lake gives a page that says so and names the command', async () => {
    const empty = join(root, 'nothing');
    const out = join(root, 'empty.html');
    const r = await writeDashboard(empty, out);
    expect(r.empty).toBe(true);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('No data yet');
    expect(html).toContain('<code>pool-export run</code>');
    expect(html).not.toContain('<script');
  });

  it('escapes markup and control characters, and keeps script-breaking text out of the JSON', () => {
    expect(escapeHtml(`<img src=x onerror="a">&'\u001b[31m\u202e`)).toBe(
      '&lt;img src=x onerror=&quot;a&quot;&gt;&amp;&#39;\\u001b[31m\\u202e',
    );
    expect(scriptJson({ s: '</script><!-- \u2028\u2029' })).toBe('{"s":"\\u003c/script>\\u003c!-- \\u2028\\u2029"}');
    expect(usd(1234567.891)).toBe('1.2M USD');
    expect(usd(1.2765e35)).toBe('1.28e+35 USD');
    expect(usd(null)).toBe('–');
  });
});
