/**
 * Sandbox at scale: starts `pool-export sandbox --scale N` and measures its memory (VmRSS, VmHWM) and the latency of
 * 1000-row pages at several depths of the swap history. Each page is fetched once, walking the keyset as an exporter
 * does (the sandbox caches no answers); the table gives the sandbox's own time (its `server-timing` header) and the
 * client's (request to parsed body). Usage: `npx tsx bench/sandbox-scale.ts [N]`.
 */
import { readFileSync } from 'node:fs';
import { startSandbox } from '../src/sandbox/spawn.ts';

const SCALE = Number(process.argv[2] ?? 10_000_000);
/** Consecutive pages timed per position; the median is reported. */
const REPEATS = 9;

function memMb(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)![1]);
  return { rss: Math.round(kb('VmRSS') / 1024), hwm: Math.round(kb('VmHWM') / 1024) };
}

const sb = await startSandbox(['--scale', String(SCALE), '--chains', '1']);
const path = `/subgraph/graphql?chainId=1&schemaName=dodoex&apikey=${sb.apiKey}`;
async function gql(
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ ms: number; server: number; data: Record<string, any> }> {
  const t = performance.now();
  const res = await fetch(`${sb.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data: Record<string, any>; errors?: { message: string }[] };
  if (body.errors) throw new Error(body.errors[0]!.message);
  const server = Number(/dur=([\d.]+)/.exec(res.headers.get('server-timing') ?? '')?.[1]);
  return { ms: performance.now() - t, server, data: body.data };
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const PAGE = `query P($ts: BigInt!, $id: ID!, $block: Int!) { swaps(first: 1000, orderBy: timestamp, orderDirection: asc, block: { number: $block },
  where: { or: [{ timestamp_gt: $ts }, { timestamp: $ts, id_gt: $id }] }) { id hash timestamp pair { id } sender from to fromToken { id } toToken { id } logIndex amountIn amountOut feeBase feeQuote baseVolume quoteVolume volumeUSD updatedAt } }`;

try {
  const idle = memMb(sb.child.pid!);
  const meta = (await gql('{ _meta { block { number timestamp } } }')).data._meta.block;
  const span = 60 * 86_400;
  const rows: string[] = [];
  const line = (label: string, n: number, server: number[], client: number[]) =>
    rows.push(`| ${label} | ${n} | ${median(server).toFixed(1)} | ${median(client).toFixed(1)} |`);
  for (const [label, frac] of [
    ['start', 0],
    ['middle (burst)', 0.618],
    ['end', 0.99],
  ] as const) {
    let ts = String(meta.timestamp - span + Math.floor(span * frac));
    let id = '';
    const server: number[] = [];
    const client: number[] = [];
    let n = 0;
    for (let i = 0; i < REPEATS; i++) {
      const r = await gql(PAGE, { ts, id, block: meta.number });
      server.push(r.server);
      client.push(r.ms);
      const page = r.data.swaps as { id: string; timestamp: string }[];
      n = page.length;
      ts = page[page.length - 1]!.timestamp;
      id = page[page.length - 1]!.id;
    }
    line(`swaps, timestamp keyset, ${label}`, n, server, client);
  }
  {
    // Pages by id, as clients without a timestamp field page (and the auto-pagination strategy does).
    let id = '0x4';
    const server: number[] = [];
    const client: number[] = [];
    let n = 0;
    // The first id-ordered query builds the id index of the swaps (once per process, lazily).
    const build = await gql('{ swaps(first: 1, orderBy: id) { id } }');
    line('swaps, first id-ordered query (builds the id index)', 1, [build.server], [build.ms]);
    for (let i = 0; i < REPEATS; i++) {
      const r = await gql(
        'query P($id: ID!) { swaps(first: 1000, orderBy: id, where: { id_gt: $id }) { id timestamp amountIn amountOut volumeUSD } }',
        { id },
      );
      server.push(r.server);
      client.push(r.ms);
      n = r.data.swaps.length;
      id = r.data.swaps[n - 1].id;
    }
    line('swaps, id keyset (5 fields)', n, server, client);
  }
  for (const [label, q] of [
    ['pairs, full id page', '{ pairs(first: 1000, orderBy: id) { id baseReserve quoteReserve updatedAt } }'],
    [
      'pairDayDatas, latest page',
      '{ pairDayDatas(first: 1000, orderBy: date, orderDirection: desc) { id date volumeUSD feeBase feeQuote } }',
    ],
  ] as const) {
    const server: number[] = [];
    const client: number[] = [];
    let n = 0;
    for (let i = 0; i < REPEATS; i++) {
      const r = await gql(q);
      server.push(r.server);
      client.push(r.ms);
      n = Object.values(r.data)[0].length;
    }
    line(`${label} (same page ${REPEATS} times)`, n, server, client);
  }
  const after = memMb(sb.child.pid!);
  console.log(
    `sandbox --scale ${SCALE} (one chain): RSS idle ${idle.rss} MB, after the queries ${after.rss} MB, peak (VmHWM) ${after.hwm} MB\n`,
  );
  console.log(
    `| request | rows | sandbox ms (median of ${REPEATS}) | client ms (request to parsed body) |\n|---|---:|---:|---:|\n${rows.join('\n')}`,
  );
} finally {
  await sb.stop();
}
