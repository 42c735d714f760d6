/**
 * The dashboard as one self-contained HTML page: the figures as JSON, ECharts (its `echarts.common.min.js`, inline)
 * drawing them as SVG in the browser with tooltips, and the tables rendered here. A Content-Security-Policy forbids
 * every request, so the page works offline and cannot call out. Upstream text (symbols, pool ids) is escaped in HTML,
 * kept inert in the JSON (`<` written as `\u003c`), and escaped again by the tooltips that show it.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { humanDuration } from '../util/display.ts';
import { jsonSafe } from '../util/inert.ts';
import { type DashboardData, type Freshness, hasDodoData, type TopPool } from './dashboard-data.ts';
import type { DeploymentFreshness, SubgraphDataset } from './dashboard-subgraphs.ts';

/** Characters that HTML must not see raw. */
const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe for HTML content and attribute values; control characters shown as escapes. */
export function escapeHtml(text: string): string {
  return text
    .replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!)
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => {
      return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    });
}

/** Upstream text cut to `max` characters for a table cell or a label (a name can be a megabyte long). */
export function cut(text: string, max = 40): string {
  // Only the head is split into code points (each takes at most two UTF-16 units): a megabyte costs what a word does.
  if (text.length <= max) return text;
  const head = [...text.slice(0, 2 * max)];
  return head.length > max || text.length > 2 * max ? `${head.slice(0, max - 1).join('')}…` : text;
}

/** JSON that can sit inside a `<script>` element: no `<`, and no line separators that old parsers choke on. */
export function scriptJson(value: unknown): string {
  return jsonSafe(JSON.stringify(value)).replace(/</g, '\\u003c');
}

const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
const percent = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 2 });

/** A number as people read it: `1.2M`; past a thousand trillion (a scam token's volume), `1.28e+35`. */
export function compactNumber(v: number): string {
  return Math.abs(v) >= 1e15 ? v.toExponential(2) : compact.format(v);
}

/** An amount of USD as people read it: `1.2M USD`. The page's script formats with the same rule. */
export function usd(v: number | null): string {
  return v === null ? '–' : `${compactNumber(v)} USD`;
}

/** A fraction as a percentage: `5.12%`. */
export function pct(v: number | null): string {
  return v === null ? '–' : percent.format(v);
}

let echartsScript: string | undefined;

/** ECharts' browser build (line, bar and the common components), read once. */
function echarts(): string {
  if (echartsScript === undefined) {
    const file = createRequire(import.meta.url).resolve('echarts/dist/echarts.common.min.js');
    // `</script` cannot appear inside the element that holds it.
    echartsScript = readFileSync(file, 'utf8').replace(/<\/script/gi, '<\\/script');
  }
  return echartsScript;
}

const STYLE = `
  :root { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2630; background: #f5f7fa; }
  body { margin: 0 auto; max-width: 1280px; padding: 16px 24px 48px; }
  h1 { font-size: 22px; margin: 8px 0 2px; }
  .meta { color: #5b6875; font-size: 13px; margin-bottom: 16px; }
  .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr)); gap: 16px; }
  section { background: #fff; border: 1px solid #dde3ea; border-radius: 8px; padding: 12px 16px; }
  section h2 { font-size: 15px; margin: 0 0 4px; }
  section p.note { color: #5b6875; font-size: 12px; margin: 0 0 8px; }
  .chart { height: 340px; }
  table { border-collapse: collapse; width: 100%; font-size: 13px; }
  th, td { padding: 4px 6px; border-bottom: 1px solid #edf0f4; text-align: left; white-space: nowrap; }
  td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
  td.wrap, th.wrap { white-space: normal; overflow-wrap: anywhere; }
  section { overflow-x: auto; }
  .spark { width: 140px; height: 32px; }
  .wide { grid-column: 1 / -1; }
  .fresh { background: #e3f6e8; } .stale { background: #fff4d6; } .old { background: #fde2e1; } .failed { background: #f7c5c2; }
  .freshness td, .freshness th { font-size: 12px; padding: 2px 6px; }
  .empty { padding: 32px; font-size: 16px; }
  code { background: #eef1f5; padding: 1px 4px; border-radius: 3px; }
`;

/** The page's script: reads the JSON, draws each chart as SVG, and lists them on `window.poolExportCharts`. */
const SCRIPT = `
(function () {
  var D = JSON.parse(document.getElementById('dashboard-data').textContent);
  // Upstream text in labels: control and bidirectional characters shown as escapes, cut to 40 characters.
  var inert = function (s) {
    var t = String(s).replace(/[\\u0000-\\u001f\\u007f-\\u009f\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]/g, function (c) {
      return '\\\\u' + ('000' + c.charCodeAt(0).toString(16)).slice(-4);
    });
    var chars = Array.from(t);
    return chars.length > 40 ? chars.slice(0, 39).join('') + '…' : t;
  };
  var esc = function (s) { return String(s).replace(/[&<>"']/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]; }); };
  var compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
  var percent = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 2 });
  var num = function (v) { return Math.abs(v) >= 1e15 ? v.toExponential(2) : compact.format(v); };
  var usd = function (v) { return v == null ? '–' : num(v) + ' USD'; };
  var pct = function (v) { return v == null ? '–' : percent.format(v); };
  var charts = {};
  function make(id, option) {
    var el = document.getElementById(id);
    if (!el) return;
    var c = echarts.init(el, null, { renderer: 'svg' });
    c.setOption(Object.assign({ animation: false }, option));
    charts[id] = c;
  }
  function tip(fmt) {
    return { trigger: 'axis', formatter: function (ps) {
      return esc(ps[0].axisValueLabel) + ps.map(function (p) { return '<br>' + p.marker + esc(p.seriesName) + ': ' + fmt(p.value); }).join('');
    } };
  }
  var grid = { top: 72, left: 72, right: 24, bottom: 48 };
  var dayAxis = function (days) { return { type: 'category', data: days, name: 'UTC day', nameLocation: 'middle', nameGap: 30 }; };
  var usdAxis = { type: 'value', name: 'USD', axisLabel: { formatter: num } };
  make('chart-tvl', {
    title: { text: 'TVL per chain (tracked)', textStyle: { fontSize: 14 } },
    tooltip: tip(usd), legend: { top: 28, type: 'scroll' }, grid: grid,
    xAxis: Object.assign(dayAxis(D.tvl.days), { boundaryGap: false }), yAxis: usdAxis,
    series: D.tvl.series.map(function (s) { return { name: s.chain, type: 'line', stack: 'tvl', areaStyle: {}, showSymbol: false, data: s.values }; })
  });
  make('chart-volume', {
    title: { text: 'Daily volume per chain (tracked)', textStyle: { fontSize: 14 } },
    tooltip: tip(usd), legend: { top: 28, type: 'scroll' }, grid: grid,
    xAxis: dayAxis(D.volume.days), yAxis: usdAxis,
    series: D.volume.series.map(function (s) { return { name: s.chain, type: 'bar', stack: 'volume', data: s.values }; })
  });
  var label = function (p) { return inert((p.base || '?') + '/' + (p.quote || '?')) + ' (' + p.chain + ')'; };
  make('chart-apy', {
    title: { text: 'APY of the top pools: the service\\'s beside the fee APY', textStyle: { fontSize: 14 } },
    tooltip: tip(pct), legend: { top: 28 }, grid: Object.assign({}, grid, { bottom: 90 }),
    xAxis: { type: 'category', data: D.topPools.map(label), axisLabel: { rotate: 30, interval: 0 }, name: 'pool', nameLocation: 'end' },
    yAxis: { type: 'value', name: 'APY (% a year)', axisLabel: { formatter: function (v) { return pct(v); } } },
    series: [
      { name: 'service APY (transactions)', type: 'bar', data: D.topPools.map(function (p) { return p.implausible.service ? null : p.serviceApy; }) },
      { name: 'fee APY (tracked fees / tracked TVL × 365)', type: 'bar', data: D.topPools.map(function (p) { return p.implausible.fee ? null : p.feeApy; }) }
    ]
  });
  make('chart-tokens', {
    title: { text: 'Volume by token (tracked)', textStyle: { fontSize: 14 } },
    tooltip: tip(usd), grid: Object.assign({}, grid, { left: 150, top: 48 }),
    xAxis: Object.assign({}, usdAxis, { name: 'USD', nameLocation: 'middle', nameGap: 30 }),
    yAxis: { type: 'category', inverse: true, data: D.tokens.map(function (t) { return inert(t.symbol) + ' (' + t.chain + ')'; }), axisLabel: { width: 130, overflow: 'truncate' } },
    series: [{ name: 'volume', type: 'bar', data: D.tokens.map(function (t) { return t.volumeUsd; }) }]
  });
  var A = D.subgraphs.activity;
  make('chart-activity', {
    title: { text: 'Rows per ' + A.unit + ' (UTC), by dataset', textStyle: { fontSize: 14 } },
    tooltip: tip(function (v) { return num(v) + ' rows'; }), legend: { top: 28, type: 'scroll' }, grid: grid,
    xAxis: Object.assign(dayAxis(A.buckets), { name: 'UTC ' + A.unit }),
    yAxis: { type: 'value', name: 'rows', axisLabel: { formatter: num } },
    series: A.series.map(function (s) { return { name: s.dataset, type: 'line', showSymbol: A.buckets.length < 2, data: s.values }; })
  });
  D.topPools.forEach(function (p, i) {
    make('spark-' + i, {
      grid: { top: 2, bottom: 2, left: 2, right: 2 }, tooltip: tip(usd),
      xAxis: { type: 'category', show: false, data: p.spark.days }, yAxis: { type: 'value', show: false, scale: true },
      series: [{ name: 'tracked TVL', type: 'line', showSymbol: false, data: p.spark.values, lineStyle: { width: 1.5 } }]
    });
  });
  window.poolExportCharts = charts;
  document.body.setAttribute('data-rendered', String(Object.keys(charts).length));
})();
`;

function topPoolsTable(pools: readonly TopPool[]): string {
  const rows = pools.map((p, i) => {
    const pair = `${cut(p.base ?? '?', 24)}/${cut(p.quote ?? '?', 24)}`;
    return `<tr data-chain-id="${p.chainId}" data-pool="${escapeHtml(p.pool)}">
      <td class="n">${i + 1}</td><td>${escapeHtml(p.chain)}</td><td title="${escapeHtml(p.pool)}">${escapeHtml(short(p.pool))}</td>
      <td>${escapeHtml(pair)}</td><td>${escapeHtml(p.type ?? '')}</td>
      <td class="n" data-value="${p.tvlUsd ?? ''}">${usd(p.tvlUsd)}</td>
      <td class="n" data-value="${p.tvlServiceUsd ?? ''}">${usd(p.tvlServiceUsd)}</td>
      <td><div class="spark" id="spark-${i}"></div></td>
      <td class="n" data-value="${p.serviceApy ?? ''}">${apyCell(p.serviceApy, p.implausible.service)}</td>
      <td class="n" data-value="${p.feeApy ?? ''}">${apyCell(p.feeApy, p.implausible.fee)}</td></tr>`;
  });
  return `<table class="top-pools"><thead><tr><th class="n">#</th><th>chain</th><th>pool</th><th>pair</th><th>type</th>
    <th class="n">TVL, tracked</th><th class="n">TVL, service</th><th>tracked TVL over the days</th>
    <th class="n">service APY</th><th class="n">fee APY</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** An APY as a percentage; one the plausibility rule flags is marked, and titled with the rule. */
function apyCell(apy: number | null, implausible: boolean): string {
  return implausible
    ? `<span class="implausible" title="implausible: above 1,000% a year or below 0; left out of the chart">${pct(apy)} ⚠</span>`
    : pct(apy);
}

/** A long id shortened for reading (`0x1234…cdef`); the full id is in the cell's title. */
function short(id: string): string {
  return id.length > 14 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id;
}

/** The freshness class of a lag: within an hour, a day, or older; a failed last task, or gaps, show as failed. */
function freshClass(f: Freshness): string {
  if (f.lastStatus === 'failed' || (f.verification?.gaps ?? 0) > 0) return 'failed';
  if (f.lagSecs === null) return '';
  return f.lagSecs <= 3600 ? 'fresh' : f.lagSecs <= 86_400 ? 'stale' : 'old';
}

function freshnessTable(entries: readonly Freshness[]): string {
  if (!entries.length) return '<p class="note">No run has recorded its status in this data folder yet.</p>';
  const chains = [...new Map(entries.map((e) => [e.chainId, e.chain])).entries()].sort((a, b) => a[0] - b[0]);
  const datasets = [...new Set(entries.map((e) => e.dataset))].sort();
  const at = new Map(entries.map((e) => [`${e.dataset}/${e.chainId}`, e]));
  const head = chains.map(([, name]) => `<th class="n">${escapeHtml(name)}</th>`).join('');
  const body = datasets.map((d) => {
    const cells = chains.map(([id]) => {
      const e = at.get(`${d}/${id}`);
      if (!e) return '<td></td>';
      const v = e.verification;
      const verified = v
        ? `; verified ${v.at}: ${v.gaps ? `${v.gaps} groups differ from the upstream's counters` : 'no gaps'}`
        : '';
      const title = `last success: ${e.lastSuccess ?? 'never'}; data at block time ${e.blockTime ?? '–'}; last task: ${e.lastStatus ?? '–'}${verified}`;
      const lag = e.lagSecs === null ? (e.lastStatus ?? '–') : humanDuration(e.lagSecs);
      const text = v?.gaps ? `${lag}, ${v.gaps} gaps` : v ? `${lag} ✓` : lag;
      return `<td class="n ${freshClass(e)}" title="${escapeHtml(title)}">${escapeHtml(text)}</td>`;
    });
    return `<tr><th>${escapeHtml(d)}</th>${cells.join('')}</tr>`;
  });
  return `<table class="freshness"><thead><tr><th>dataset</th>${head}</tr></thead><tbody>${body.join('')}</tbody></table>`;
}

/** The rows of each subgraph dataset, per chain, with the range of its times. */
function subgraphDatasetsTable(datasets: readonly SubgraphDataset[]): string {
  const rows = datasets.map((d) => {
    const chains = d.chains.map((c) => `${c.chain} ${c.rows.toLocaleString('en-US')}`).join('; ');
    const outside = d.outside ? ` (${d.outside.toLocaleString('en-US')} outside 2009 to now)` : '';
    return `<tr data-dataset="${escapeHtml(d.dataset)}"><th class="wrap">${escapeHtml(d.dataset)}</th><td>${escapeHtml(d.kind)}</td>
      <td class="n" data-value="${d.rows}">${d.rows.toLocaleString('en-US')}</td><td class="wrap">${escapeHtml(chains)}</td>
      <td>${escapeHtml(d.timeField ?? '–')}</td><td>${escapeHtml(d.first ?? '–')}</td><td>${escapeHtml(d.last ?? '–')}${escapeHtml(outside)}</td></tr>`;
  });
  return `<table class="subgraph-datasets"><thead><tr><th>dataset</th><th>read as</th><th class="n">rows</th><th>per chain</th>
    <th>time field</th><th>first</th><th>last</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** The freshness class of a deployment: as a dataset's, by its most behind dataset. */
function deploymentClass(d: DeploymentFreshness): string {
  if (d.failed.length) return 'failed';
  if (d.lagSecs === null) return '';
  return d.lagSecs <= 3600 ? 'fresh' : d.lagSecs <= 86_400 ? 'stale' : 'old';
}

/** Freshness per deployment of the subgraphs. */
function deploymentsTable(deployments: readonly DeploymentFreshness[]): string {
  if (!deployments.length) return '<p class="note">No run has recorded its status in this data folder yet.</p>';
  const rows = deployments.map((d) => {
    const blocks = d.blocks
      ? d.blocks.min === d.blocks.max
        ? `${d.blocks.min}`
        : `${d.blocks.min} to ${d.blocks.max}`
      : '–';
    const lag = d.lagSecs === null ? '–' : humanDuration(d.lagSecs);
    const failed = [
      d.failed.length ? `${d.failed.length} failed: ${d.failed.join(', ')}` : 'none failed',
      ...(d.unavailable.length ? [`${d.unavailable.length} not served there: ${d.unavailable.join(', ')}`] : []),
    ].join('; ');
    return `<tr data-deployment="${escapeHtml(`${d.subgraph}/${d.chainId}`)}"><th>${escapeHtml(d.subgraph)}</th><td>${escapeHtml(d.chain)}</td>
      <td class="wrap">${escapeHtml(d.endpoint ?? '–')}</td><td class="n">${escapeHtml(blocks)}</td><td>${escapeHtml(d.blockTime ?? '–')}</td>
      <td class="n ${deploymentClass(d)}" data-lag="${d.lagSecs ?? ''}">${escapeHtml(lag)}</td><td>${escapeHtml(d.lastSuccess ?? 'never')}</td>
      <td class="wrap">${d.datasets} (${escapeHtml(failed)})</td></tr>`;
  });
  return `<table class="deployments freshness"><thead><tr><th>subgraph</th><th>chain</th><th>endpoint</th><th class="n">block</th>
    <th>block time (oldest)</th><th class="n">lag</th><th>last success</th><th>datasets</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function filterText(d: DashboardData): string {
  const f = d.filter;
  const chains = f.chains?.length ? `chains ${f.chains.join(', ')}` : 'every chain';
  const days = f.from || f.to ? `days ${f.from ?? 'first'} to ${f.to ?? 'last'}` : 'every day';
  return `${chains}; ${days}`;
}

/** The page's head: no request may leave it (Content-Security-Policy), styles inline. */
function head(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>pool-export dashboard</title><style>${STYLE}</style></head>`;
}

/** The page when the lake has nothing to show: what to run to fill it. */
export function emptyDashboardHtml(dataDir: string, generatedAt: string): string {
  return `${head()}
<body data-rendered="0"><h1>pool-export dashboard</h1><div class="meta">made ${escapeHtml(generatedAt)} from ${escapeHtml(dataDir)}</div>
<section class="empty" data-part="empty"><h2>No data yet</h2>
<p>The lake of this data folder holds nothing to chart. Fill it with <code>pool-export run</code> (or try the sandbox with
<code>make demo</code>), then make the page again with <code>pool-export dashboard --out FILE.html</code>.</p></section>
</body></html>
`;
}

type Section = (part: string, text: { title: string; note: string; wide?: boolean }, inner: string) => string;

/** DODO's charts and tables, drawn where DODO is exported. */
function dodoSections(d: DashboardData, section: Section): string {
  return `${section('tvl', { title: 'TVL per chain', note: 'Sum of the pools\u2019 tracked TVL (report tvl_daily); a pool without activity on a day counts with its last known TVL.' }, '<div class="chart" id="chart-tvl"></div>')}
${section('volume', { title: 'Daily volume per chain', note: 'Tracked USD volume summed over the pools (report volume_daily).' }, '<div class="chart" id="chart-volume"></div>')}
${section('top-pools', { title: 'Top pools by tracked TVL', note: 'Latest liquidity-list snapshot (report top_pools); the line is the pool\u2019s tracked TVL per day (tvl_daily).', wide: true }, topPoolsTable(d.topPools))}
${section('apy', { title: 'APY', note: 'The service\u2019s transaction APY (top_pools) beside the fee APY of the pool\u2019s latest day (report apy). An APY above 1,000% a year or below 0 is implausible: marked \u26a0 in the table and left out of the chart, so that it does not set the scale.' }, '<div class="chart" id="chart-apy"></div>')}
${section('tokens', { title: 'Volume by token', note: 'Tracked USD volume per token over the days shown (report volume_by_token).' }, '<div class="chart" id="chart-tokens"></div>')}
${section('freshness', { title: 'Freshness', note: 'How old the committed data of each dataset are per chain (hover for the last success and the last verification), from the data folder\u2019s status file: \u2713 marks data verified complete against the upstream\u2019s counters; gaps, groups that differ from them (pool-export verify names them).', wide: true }, freshnessTable(d.freshness))}`;
}

/** What a subgraph user looks at: rows per day or hour, rows per dataset, freshness per deployment. */
function subgraphSections(d: DashboardData, section: Section): string {
  const a = d.subgraphs.activity;
  const drawn =
    a.series.length < d.subgraphs.datasets.filter((x) => x.first !== null).length
      ? ` (the ${a.series.length} with the most rows)`
      : '';
  return `${section('subgraph-activity', { title: `Rows per ${a.unit}`, note: `Rows of each subgraph dataset per UTC ${a.unit} of its time field${drawn}: an aggregation's bucket, an event's time, else its first field named \u2026timestamp.`, wide: true }, '<div class="chart" id="chart-activity"></div>')}
${section('subgraph-datasets', { title: 'Rows per dataset', note: 'Rows in the lake of each dataset of the subgraphs added to this folder (a mutable entity: one row per id, its latest state), per chain, with its first and last time.', wide: true }, subgraphDatasetsTable(d.subgraphs.datasets))}
${section('deployments', { title: 'Freshness per deployment', note: 'Each subgraph\u2019s deployment per chain, from the data folder\u2019s status file: the blocks its datasets\u2019 committed rows were read at, and the lag of the oldest (a deployment is as fresh as its most behind dataset).', wide: true }, deploymentsTable(d.subgraphs.deployments))}`;
}

/** The whole page. */
export function dashboardHtml(d: DashboardData, dataDir: string): string {
  const section: Section = (part, text, inner) =>
    `<section data-part="${part}"${text.wide ? ' class="wide"' : ''}><h2>${text.title}</h2><p class="note">${text.note}</p>${inner}</section>`;
  const dodo = hasDodoData(d);
  const tracked = dodo
    ? ' Tracked figures value an untrusted token at the price of the pool that backs it with a trusted token, at most that backing.'
    : '';
  return `${head()}
<body><h1>pool-export dashboard</h1>
<div class="meta">made ${escapeHtml(d.generatedAt)} from ${escapeHtml(dataDir)}; ${escapeHtml(filterText(d))}.${tracked}</div>
<div class="grid">
${dodo ? dodoSections(d, section) : ''}
${d.subgraphs.datasets.length ? subgraphSections(d, section) : ''}
</div>
<script type="application/json" id="dashboard-data">${scriptJson(d)}</script>
<script>${echarts()}</script>
<script>${SCRIPT}</script>
</body></html>
`;
}
