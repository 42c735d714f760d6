import { createWriteStream } from 'node:fs';
import { mapPage } from '../src/export/mapper.ts';
import { pageQuery } from '../src/export/queries.ts';
import type { SandboxEndpoint, SandboxProcess } from '../src/sandbox/spawn.ts';
import { CHAIN, SWAPS } from './ceiling.ts';
import { cpuSecs, gql, type Row } from './suite.ts';

/** (a) A hand-written script: `skip` pages in timestamp order, one after the other, until the upstream refuses. */
export async function skipPager(
  sb: SandboxProcess,
  block: number,
): Promise<{ rows: number; secs: number; stop: string }> {
  const q = `query P($skip: Int!, $block: Int!) { swaps(first: 1000, skip: $skip, orderBy: timestamp, orderDirection: asc, block: { number: $block }) { id timestamp amountIn amountOut volumeUSD } }`;
  const t = performance.now();
  let rows = 0;
  for (let skip = 0; ; skip += 1000) {
    try {
      const page = (await gql<{ swaps: Row[] }>(sb, q, { skip, block })).swaps;
      rows += page.length;
      if (page.length < 1000) return { rows, secs: (performance.now() - t) / 1000, stop: 'end of data' };
    } catch (e) {
      return {
        rows,
        secs: (performance.now() - t) / 1000,
        stop: (e as Error).message.replace(/\s+/g, ' ').slice(0, 60),
      };
    }
  }
}

/**
 * (b) The strategy of `@graphprotocol/client-auto-pagination`: a large `first` is split into aliased sub-queries of
 * 1000 with growing `skip` up to the skip limit, then the next request continues after the last id (`id_gt`).
 */
export async function autoPagination(
  sb: SandboxProcess,
  block: number,
  select: string,
): Promise<{ rows: number; secs: number; requests: number }> {
  const aliases = [0, 1000, 2000, 3000, 4000].map(
    (skip, i) =>
      `p${i}: swaps(first: 1000, skip: ${skip}, orderBy: id, orderDirection: asc, block: { number: $block }, where: { id_gt: $last }) { ${select} }`,
  );
  const q = `query P($last: ID!, $block: Int!) { ${aliases.join(' ')} }`;
  const t = performance.now();
  let rows = 0;
  let requests = 0;
  for (let last = ''; ; ) {
    const data = await gql<Record<string, Row[]>>(sb, q, { last, block });
    requests++;
    const all = Object.keys(data)
      .sort()
      .flatMap((k) => data[k]!);
    rows += all.length;
    if (all.length < 5000) return { rows, secs: (performance.now() - t) / 1000, requests };
    last = all[all.length - 1]!.id;
  }
}

/**
 * (c) The floor: the pages pool-export asks for (its own queries, four key-range shards at once), fetched and parsed
 * with no other work. With `record`, the mapped rows are also written as NDJSON, untimed, for (d).
 */
export async function floor(
  sb: SandboxEndpoint,
  at: { number: number; timestamp: number },
  shards: number,
  record?: string,
): Promise<{ rows: number; secs: number; requests: number; cpu: number }> {
  const first = (
    await gql<{ rows: Row[] }>(sb, pageQuery(SWAPS, 'swaps', 'seq-first'), { first: 1, block: at.number, from: '0' })
  ).rows[0]!;
  const lo = Number(first.timestamp);
  const hi = at.timestamp + 1;
  const out = record ? createWriteStream(record) : undefined;
  let rows = 0;
  let requests = 0;
  const cpu0 = cpuSecs();
  const t = performance.now();
  await Promise.all(
    Array.from({ length: shards }, async (_, k) => {
      const to = String(lo + Math.floor(((k + 1) * (hi - lo)) / shards));
      let vars: Record<string, unknown> = {
        first: 1000,
        block: at.number,
        from: String(lo + Math.floor((k * (hi - lo)) / shards)),
        to,
      };
      let shape: 'range-first' | 'range-next' = 'range-first';
      for (;;) {
        const page = (await gql<{ rows: Row[] }>(sb, pageQuery(SWAPS, 'swaps', shape), vars)).rows;
        requests++;
        rows += page.length;
        if (out)
          out.write(
            mapPage(SWAPS, CHAIN, page)
              .rows.map((r) => JSON.stringify(r))
              .join('\n') + (page.length ? '\n' : ''),
          );
        if (page.length < 1000) return;
        const last = page[page.length - 1]!;
        shape = 'range-next';
        vars = { first: 1000, block: at.number, seq: String(last.timestamp), id: last.id, to };
      }
    }),
  );
  const secs = (performance.now() - t) / 1000;
  const cpu = cpuSecs() - cpu0;
  if (out) await new Promise((r) => out.end(r));
  return { rows, secs, requests, cpu };
}
