/**
 * Sandbox at scale: starts `pool-export sandbox --scale N` and measures its memory (VmRSS, VmHWM) and the latency of
 * 1000-row keyset pages at several depths of the swap history. Usage: `npx tsx bench/sandbox-scale.ts [N]`.
 */
import { readFileSync } from 'node:fs';
import { startSandbox } from '../src/sandbox/spawn.ts';

const SCALE = Number(process.argv[2] ?? 10_000_000);
/** Pages timed per position; the median is reported. */
const REPEATS = 7;

function memMb(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)![1]);
  return { rss: Math.round(kb('VmRSS') / 1024), hwm: Math.round(kb('VmHWM') / 1024) };
}

const sb = await startSandbox(['--scale', String(SCALE), '--chains', '1']);
const path = `/subgraph/graphql?chainId=1&schemaName=dodoex&apikey=${sb.apiKey}`;
async function gql(query: string, variables: Record<string, unknown> = {}): Promise<{ ms: number; data: Record<string, any> }> {
  const t = performance.now();
  const res = await fetch(`${sb.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  const body = (await res.json()) as { data: Record<string, any>; errors?: { message: string }[] };
  if (body.errors) throw new Error(body.errors[0]!.message);
  return { ms: performance.now() - t, data: body.data };
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const PAGE = `query P($ts: BigInt!, $id: ID!, $block: Int!) { swaps(first: 1000, orderBy: timestamp, orderDirection: asc, block: { number: $block },
  where: { or: [{ timestamp_gt: $ts }, { timestamp: $ts, id_gt: $id }] }) { id hash timestamp pair { id } sender from to fromToken { id } toToken { id } logIndex amountIn amountOut feeBase feeQuote baseVolume quoteVolume volumeUSD updatedAt } }`;

try {
  const idle = memMb(sb.child.pid!);
  const meta = (await gql('{ _meta { block { number timestamp } } }')).data._meta.block;
  const span = 60 * 86_400;
  const rows: string[] = [];
  for (const [label, frac] of [['start', 0], ['middle (burst)', 0.618], ['end', 0.999]] as const) {
    const ts = String(meta.timestamp - span + Math.floor(span * frac));
    const times: number[] = [];
    let n = 0;
    for (let i = 0; i < REPEATS; i++) {
      const r = await gql(PAGE, { ts, id: '', block: meta.number });
      times.push(r.ms);
      n = r.data.swaps.length;
    }
    rows.push(`| swaps keyset page, ${label} | ${n} | ${median(times).toFixed(1)} |`);
  }
  for (const [label, q] of [
    ['pairs, full id page', '{ pairs(first: 1000, orderBy: id) { id baseReserve quoteReserve updatedAt } }'],
    ['pairDayDatas, latest page', '{ pairDayDatas(first: 1000, orderBy: date, orderDirection: desc) { id date volumeUSD feeBase feeQuote } }'],
  ] as const) {
    const times: number[] = [];
    let n = 0;
    for (let i = 0; i < REPEATS; i++) {
      const r = await gql(q);
      times.push(r.ms);
      n = Object.values(r.data)[0].length;
    }
    rows.push(`| ${label} | ${n} | ${median(times).toFixed(1)} |`);
  }
  const after = memMb(sb.child.pid!);
  console.log(`sandbox --scale ${SCALE} (one chain): RSS idle ${idle.rss} MB, after the queries ${after.rss} MB, peak (VmHWM) ${after.hwm} MB\n`);
  console.log(`| request | rows | median ms (of ${REPEATS}, client-measured, incl. HTTP) |\n|---|---:|---:|\n${rows.join('\n')}`);
} finally {
  await sb.stop();
}
