/**
 * The dashboard page's markup from figures written out by hand: every cell, class and label compared with the HTML
 * expected of it (written here, not produced by the page's own helpers), at the edges of each rule.
 */
import { describe, expect, it } from 'vitest';
import type { DashboardData, Freshness, TopPool } from '../../src/reports/dashboard-data.ts';
import { compactNumber, cut, dashboardHtml, emptyDashboardHtml, pct, usd } from '../../src/reports/dashboard-page.ts';

const pool = (over: Partial<TopPool>): TopPool => ({
  chain: 'bsc',
  chainId: 56,
  pool: '0x1234567890abcdef1234',
  type: 'DVM',
  base: 'WBNB',
  quote: 'USDT',
  tvlUsd: 1234567.891,
  tvlServiceUsd: 2500,
  serviceApy: 0.051234,
  feeApy: 0.25,
  implausible: { service: false, fee: false },
  spark: { days: ['2026-01-01'], values: [1] },
  ...over,
});

const fresh = (over: Partial<Freshness>): Freshness => ({
  dataset: 'dodoex.swaps',
  chain: 'bsc',
  chainId: 56,
  lastSuccess: '2026-01-02 00:00:00Z',
  lastStatus: 'ok',
  blockTime: '2026-01-01 23:00:00Z',
  lagSecs: 10,
  verification: null,
  ...over,
});

/** A folder's figures; DODO's volume has a day, so that DODO's part is drawn (`subgraphFolder` has none). */
const figures = (over: Partial<DashboardData>): DashboardData => ({
  generatedAt: '2026-01-02T03:04:05Z',
  filter: {},
  tvl: { days: [], series: [] },
  volume: { days: ['2026-01-01'], series: [] },
  topPools: [],
  tokens: [],
  freshness: [],
  subgraphs: { datasets: [], activity: { unit: 'day', buckets: [], series: [] }, deployments: [] },
  ...over,
});

/** The page with the whitespace between tags removed, so that rows compare as one line. */
const page = (d: DashboardData, dir = '/data') => dashboardHtml(d, dir).replace(/>\s+</g, '><');

/** The body of the table with the given class. */
function table(html: string, cls: string): string {
  const m = new RegExp(`<table class="${cls}">([\\s\\S]*?)</table>`).exec(html);
  if (!m) throw new Error(`no table ${cls} in the page`);
  return m[1]!;
}

describe('the top-pools table', () => {
  it('marks an implausible APY, keeps its figure, and names the rule in its title', () => {
    const html = page(
      figures({ topPools: [pool({ serviceApy: 52, feeApy: 0.25, implausible: { service: true, fee: false } })] }),
    );
    const cells = table(html, 'top-pools').split('<tr').slice(2)[0]!.split('<td').slice(1);
    expect(cells[8]).toBe(
      ' class="n" data-value="52"><span class="implausible" title="implausible: above 1,000% a year or below 0; left out of the chart">5,200% ⚠</span></td>',
    );
    expect(cells[9]).toBe(' class="n" data-value="0.25">25%</td></tr></tbody>');
  });

  it('shows rank, chain, short id, pair, type, amounts and APYs, with the exact values as data', () => {
    const html = page(
      figures({
        topPools: [
          pool({}),
          pool({
            chain: 'ethereum',
            chainId: 1,
            pool: '0x123456789abc',
            type: null,
            base: null,
            quote: '<b>',
            tvlUsd: null,
            tvlServiceUsd: null,
            serviceApy: null,
            feeApy: null,
          }),
          pool({ pool: '0x123456789abcd', base: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', quote: null }),
        ],
      }),
    );
    const rows = table(html, 'top-pools').split('<tr').slice(2);
    expect(rows).toEqual([
      ' data-chain-id="56" data-pool="0x1234567890abcdef1234"><td class="n">1</td><td>bsc</td>' +
        '<td title="0x1234567890abcdef1234">0x123456…1234</td><td>WBNB/USDT</td><td>DVM</td>' +
        '<td class="n" data-value="1234567.891">1.2M USD</td><td class="n" data-value="2500">2.5K USD</td>' +
        '<td><div class="spark" id="spark-0"></div></td>' +
        '<td class="n" data-value="0.051234">5.12%</td><td class="n" data-value="0.25">25%</td></tr>',
      // 14 characters: short enough to show whole; nulls as empty data and a dash.
      ' data-chain-id="1" data-pool="0x123456789abc"><td class="n">2</td><td>ethereum</td>' +
        '<td title="0x123456789abc">0x123456789abc</td><td>?/&lt;b&gt;</td><td></td>' +
        '<td class="n" data-value="">–</td><td class="n" data-value="">–</td>' +
        '<td><div class="spark" id="spark-1"></div></td>' +
        '<td class="n" data-value="">–</td><td class="n" data-value="">–</td></tr>',
      // 15 characters: shortened; a symbol cut to 24 characters.
      ' data-chain-id="56" data-pool="0x123456789abcd"><td class="n">3</td><td>bsc</td>' +
        '<td title="0x123456789abcd">0x123456…abcd</td><td>ABCDEFGHIJKLMNOPQRSTUVW…/?</td><td>DVM</td>' +
        '<td class="n" data-value="1234567.891">1.2M USD</td><td class="n" data-value="2500">2.5K USD</td>' +
        '<td><div class="spark" id="spark-2"></div></td>' +
        '<td class="n" data-value="0.051234">5.12%</td><td class="n" data-value="0.25">25%</td></tr></tbody>',
    ]);
    expect(table(html, 'top-pools')).toMatch(
      /^<thead><tr><th class="n">#<\/th><th>chain<\/th><th>pool<\/th><th>pair<\/th><th>type<\/th><th class="n">TVL, tracked<\/th><th class="n">TVL, service<\/th><th>tracked TVL over the days<\/th><th class="n">service APY<\/th><th class="n">fee APY<\/th><\/tr><\/thead><tbody>/,
    );
  });
});

describe('the freshness table', () => {
  it('has a column per chain in chain-id order, a row per dataset in name order, and a class per age', () => {
    const html = page(
      figures({
        freshness: [
          fresh({ lagSecs: 3600 }),
          fresh({ dataset: 'dodoex.pairs', lagSecs: 3601 }),
          fresh({ dataset: 'dodoex.pairs', chain: 'ethereum', chainId: 1, lagSecs: 86_400 }),
          fresh({ dataset: 'dodoex.pairs', chain: 'polygon', chainId: 137, lagSecs: 86_401 }),
          fresh({ dataset: 'dodoex.swaps', chain: 'polygon', chainId: 137, lagSecs: 10, lastStatus: 'failed' }),
          fresh({ dataset: 'a<b', chain: 'ethereum', chainId: 1, lagSecs: null, lastStatus: null }),
          fresh({ dataset: 'a<b', chain: 'bsc', chainId: 56, lagSecs: null, lastSuccess: null, blockTime: null }),
        ],
      }),
    );
    const t = (success: string, block: string, last: string) =>
      `title="last success: ${success}; data at block time ${block}; last task: ${last}"`;
    const ok = t('2026-01-02 00:00:00Z', '2026-01-01 23:00:00Z', 'ok');
    expect(table(html, 'freshness')).toBe(
      '<thead><tr><th>dataset</th><th class="n">ethereum</th><th class="n">bsc</th><th class="n">polygon</th></tr></thead><tbody>' +
        `<tr><th>a&lt;b</th><td class="n " ${t('2026-01-02 00:00:00Z', '2026-01-01 23:00:00Z', '–')}>–</td>` +
        `<td class="n " ${t('never', '–', 'ok')}>ok</td><td></td></tr>` +
        `<tr><th>dodoex.pairs</th><td class="n stale" ${ok}>24.0h</td><td class="n stale" ${ok}>1.0h</td>` +
        `<td class="n old" ${ok}>24.0h</td></tr>` +
        `<tr><th>dodoex.swaps</th><td></td><td class="n fresh" ${ok}>1.0h</td>` +
        `<td class="n failed" ${t('2026-01-02 00:00:00Z', '2026-01-01 23:00:00Z', 'failed')}>10s</td></tr></tbody>`,
    );
  });

  it('marks data verified complete, and data whose last verification found gaps as failed, with when in the title', () => {
    const html = page(
      figures({
        freshness: [
          fresh({ lagSecs: 60, verification: { at: '2026-01-02T00:01:00Z', gaps: 0 } }),
          fresh({ chain: 'polygon', chainId: 137, lagSecs: 60, verification: { at: '2026-01-02T00:02:00Z', gaps: 3 } }),
        ],
      }),
    );
    const t = (verified: string) =>
      `title="last success: 2026-01-02 00:00:00Z; data at block time 2026-01-01 23:00:00Z; last task: ok; verified ${verified}"`;
    expect(table(html, 'freshness')).toBe(
      '<thead><tr><th>dataset</th><th class="n">bsc</th><th class="n">polygon</th></tr></thead><tbody>' +
        `<tr><th>dodoex.swaps</th><td class="n fresh" ${t('2026-01-02T00:01:00Z: no gaps')}>1m ✓</td>` +
        `<td class="n failed" ${t('2026-01-02T00:02:00Z: 3 groups differ from the upstream&#39;s counters')}>1m, 3 gaps</td></tr></tbody>`,
    );
  });

  it('says so when no run has recorded its status', () => {
    expect(page(figures({}))).toContain(
      '<p class="note">How old the committed data of each dataset are per chain (hover for the last success and the last verification), from the data folder’s status file: ✓ marks data verified complete against the upstream’s counters; gaps, groups that differ from them (pool-export verify names them).</p>' +
        '<p class="note">No run has recorded its status in this data folder yet.</p></section>',
    );
  });
});

describe('the page around the tables', () => {
  it('names when and from what it was made, and the filter', () => {
    const meta = (d: Partial<DashboardData>) => /<div class="meta">([^<]*)<\/div>/.exec(page(figures(d), '/d<1>'))![1];
    const tail =
      '. Tracked figures value an untrusted token at the price of the pool that backs it with a trusted token, at most that backing.';
    expect(meta({})).toBe(`made 2026-01-02T03:04:05Z from /d&lt;1&gt;; every chain; every day${tail}`);
    expect(meta({ filter: { chains: [56, 1], from: '2026-01-01' } })).toBe(
      `made 2026-01-02T03:04:05Z from /d&lt;1&gt;; chains 56, 1; days 2026-01-01 to last${tail}`,
    );
    expect(meta({ filter: { chains: [], to: '2026-01-31' } })).toBe(
      `made 2026-01-02T03:04:05Z from /d&lt;1&gt;; every chain; days first to 2026-01-31${tail}`,
    );
  });

  it('has its six sections in order with their titles, the two tables spanning the width', () => {
    const sections = [
      ...page(figures({})).matchAll(
        /<section data-part="([^"]+)"([^>]*)><h2>([^<]+)<\/h2><p class="note">([^<]+)<\/p>/g,
      ),
    ];
    expect(sections.map((m) => [m[1], m[2], m[3]])).toEqual([
      ['tvl', '', 'TVL per chain'],
      ['volume', '', 'Daily volume per chain'],
      ['top-pools', ' class="wide"', 'Top pools by tracked TVL'],
      ['apy', '', 'APY'],
      ['tokens', '', 'Volume by token'],
      ['freshness', ' class="wide"', 'Freshness'],
    ]);
    // Each note names the report it is drawn from.
    expect(sections.map((m) => /report (\w+)|\((\w+)\)|status file/.exec(m[4]!)?.[0])).toEqual([
      'report tvl_daily',
      'report volume_daily',
      'report top_pools',
      '(top_pools)',
      'report volume_by_token',
      'status file',
    ]);
  });

  it('holds ECharts inline, once, and exactly three scripts', () => {
    const html = dashboardHtml(figures({}), '/data');
    expect(html.match(/<\/script>/g)).toHaveLength(3);
    expect(html.split('.version="6.1.0"')).toHaveLength(2);
    expect(dashboardHtml(figures({}), '/data')).toBe(html);
  });

  it('an empty page names the folder inertly and renders nothing', () => {
    const html = emptyDashboardHtml('/x/<i>', '2026-01-01T00:00:00Z');
    expect(html).toContain('<body data-rendered="0"><h1>pool-export dashboard</h1>');
    expect(html).toContain('<div class="meta">made 2026-01-01T00:00:00Z from /x/&lt;i&gt;</div>');
    expect(html).toContain('<section class="empty" data-part="empty"><h2>No data yet</h2>');
  });
});

describe('a folder of subgraphs', () => {
  const subgraphs: DashboardData['subgraphs'] = {
    datasets: [
      {
        dataset: 'uni.swaps',
        subgraph: 'uni',
        kind: 'event',
        chains: [{ chain: 'ethereum', rows: 1234 }],
        rows: 1234,
        timeField: 'timestamp',
        first: '2026-01-01T00:00:00.000Z',
        last: '2026-01-02T00:00:00.000Z',
        outside: 2,
      },
      {
        dataset: 'uni.notes',
        subgraph: 'uni',
        kind: 'mutable',
        chains: [{ chain: 'ethereum', rows: 2 }],
        rows: 2,
        timeField: null,
        first: null,
        last: null,
        outside: 0,
      },
    ],
    activity: {
      unit: 'day',
      buckets: ['2026-01-01', '2026-01-02'],
      series: [{ dataset: 'uni.swaps', values: [1, 2] }],
    },
    deployments: [
      {
        subgraph: 'uni',
        chain: 'ethereum',
        chainId: 1,
        endpoint: 'https://g/api/***/subgraphs/id/Qm<x>',
        datasets: 3,
        failed: ['uni.notes'],
        unavailable: ['uni.gone'],
        blocks: { min: 10, max: 12 },
        blockTime: '2026-01-02T00:00:00.000Z',
        lagSecs: 90,
        lastSuccess: '2026-01-02T00:01:00.000Z',
      },
    ],
  };
  const noDodo = { volume: { days: [], series: [] }, subgraphs };
  const parts = (html: string) => [...html.matchAll(/<section data-part="([^"]+)"/g)].map((m) => m[1]);

  it("draws the subgraphs' three parts and none of DODO's when DODO has no data", () => {
    const html = page(figures(noDodo));
    expect(parts(html)).toEqual(['subgraph-activity', 'subgraph-datasets', 'deployments']);
    expect(html).not.toContain('Tracked figures');
    expect(html).toContain('<div class="chart" id="chart-activity"></div>');
  });

  it("draws DODO's parts, then the subgraphs', when a folder holds both", () => {
    expect(parts(page(figures({ subgraphs })))).toEqual([
      'tvl',
      'volume',
      'top-pools',
      'apy',
      'tokens',
      'freshness',
      'subgraph-activity',
      'subgraph-datasets',
      'deployments',
    ]);
  });

  it('lists each dataset with its rows per chain and the range of its times', () => {
    expect(table(page(figures(noDodo)), 'subgraph-datasets')).toBe(
      '<thead><tr><th>dataset</th><th>read as</th><th class="n">rows</th><th>per chain</th><th>time field</th><th>first</th><th>last</th></tr></thead><tbody>' +
        '<tr data-dataset="uni.swaps"><th class="wrap">uni.swaps</th><td>event</td><td class="n" data-value="1234">1,234</td><td class="wrap">ethereum 1,234</td>' +
        '<td>timestamp</td><td>2026-01-01T00:00:00.000Z</td><td>2026-01-02T00:00:00.000Z (2 outside 2009 to now)</td></tr>' +
        '<tr data-dataset="uni.notes"><th class="wrap">uni.notes</th><td>mutable</td><td class="n" data-value="2">2</td><td class="wrap">ethereum 2</td>' +
        '<td>–</td><td>–</td><td>–</td></tr></tbody>',
    );
  });

  it('gives each deployment its blocks, lag, failures and datasets not served there, its endpoint escaped', () => {
    expect(table(page(figures(noDodo)), 'deployments freshness')).toBe(
      '<thead><tr><th>subgraph</th><th>chain</th><th>endpoint</th><th class="n">block</th><th>block time (oldest)</th><th class="n">lag</th><th>last success</th><th>datasets</th></tr></thead><tbody>' +
        '<tr data-deployment="uni/1"><th>uni</th><td>ethereum</td><td class="wrap">https://g/api/***/subgraphs/id/Qm&lt;x&gt;</td><td class="n">10 to 12</td>' +
        '<td>2026-01-02T00:00:00.000Z</td><td class="n failed" data-lag="90">2m</td><td>2026-01-02T00:01:00.000Z</td>' +
        '<td class="wrap">3 (1 failed: uni.notes; 1 not served there: uni.gone)</td></tr></tbody>',
    );
  });
});

describe('numbers and labels as people read them', () => {
  it('cuts by code points, whole when short enough', () => {
    expect(cut('abc', 3)).toBe('abc');
    expect(cut('abcd', 3)).toBe('ab…');
    expect(cut('😀'.repeat(5), 5)).toBe('😀'.repeat(5));
    expect(cut('😀'.repeat(6), 5)).toBe('😀😀😀😀…');
    expect(cut(`${'😀'.repeat(4)}ab`, 5)).toBe('😀😀😀😀…');
    expect(cut('x'.repeat(1_000_000))).toBe(`${'x'.repeat(39)}…`);
    expect(cut('x'.repeat(40))).toBe('x'.repeat(40));
  });

  it('writes compact figures below a thousand trillion and exponents from there', () => {
    expect(compactNumber(999e12)).toBe('999T');
    expect(compactNumber(1e15)).toBe('1.00e+15');
    expect(compactNumber(-1e15)).toBe('-1.00e+15');
    expect(compactNumber(1234)).toBe('1.2K');
    expect(usd(0)).toBe('0 USD');
    expect(pct(null)).toBe('–');
    expect(pct(0)).toBe('0%');
    expect(pct(0.051234)).toBe('5.12%');
    expect(pct(1.5)).toBe('150%');
  });
});
