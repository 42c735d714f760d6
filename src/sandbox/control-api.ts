/**
 * The sandbox's control API (`/_sandbox/…`, documented in docs/sandbox.md): moves its chains, sets its faults and
 * garbage, reports its counters and streams an entity's rows, on the state of a running server.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { canonicalSchema } from '../schemas/entity-model.ts';
import { aggregationKey } from './aggregation-data.ts';
import { type FaultPlan, parseFaults, type RateLimiter, type SilentDrop } from './faults.ts';
import { type Garbage, hostileNames, parseGarbage } from './garbage.ts';
import type { SandboxService } from './sandbox-service.ts';

/** Largest request body accepted. */
const MAX_BODY_BYTES = 1 << 20;

/** What the control API reads and changes of a running server. */
export interface ControlTarget {
  readonly service: SandboxService;
  readonly opts: { readonly maxFirst: number; readonly maxSkip: number };
  readonly stats: Stats;
  readonly faults: FaultPlan;
  readonly limiter: RateLimiter;
  readonly silentDrop: SilentDrop;
  latencyMs: number;
  latencyPerRowMs: number;
  garbage: Garbage | undefined;
}

/** Counters the control API reports. */
export interface Stats {
  requests: number;
  byRoute: Record<string, number>;
  byStatus: Record<string, number>;
  faults: Record<string, number>;
  rateLimited: number;
  userAgents: Record<string, number>;
  inFlight: number;
  maxInFlight: number;
  /** Milliseconds spent executing and encoding GraphQL answers (not waiting out `--latency-ms`): how busy the sandbox was. */
  busyMs: number;
  /** Data requests by the `first` variable they were sent (page sizes), counted before any fault or latency. */
  pageSizes: Record<string, number>;
  /** Answers refused because they asked at a block the deployment pruned (`--prune`). */
  pruned: number;
}

export const newStats = (): Stats => ({
  requests: 0,
  byRoute: {},
  byStatus: {},
  faults: {},
  rateLimited: 0,
  userAgents: {},
  inFlight: 0,
  maxInFlight: 0,
  busyMs: 0,
  pageSizes: {},
  pruned: 0,
});
export const bump = (rec: Record<string, number>, key: string) => (rec[key] = (rec[key] ?? 0) + 1);

export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  // Encoded once: measuring the length of a long text and then writing it would encode it twice.
  const bytes = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length, ...headers });
  res.end(bytes);
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error('body too large');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The control API (`/_sandbox/...`): the chains, faults, garbage, counters and rows of the sandbox `s`. */
export async function control(s: ControlTarget, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = req.method === 'POST' ? (JSON.parse((await readBody(req)) || '{}') as Record<string, unknown>) : {};
  const chainId = body.chainId === undefined ? undefined : Number(body.chainId);
  const heads = () =>
    s.service.worldsInUse().map((w) => ({
      chainId: w.chainId,
      name: w.tl.spec.name,
      head: w.tl.head,
      hash: w.tl.hash(w.tl.head),
      timestamp: w.tl.ts(w.tl.head),
    }));
  switch (url.pathname) {
    case '/_sandbox/info':
      return send(res, 200, {
        chains: heads(),
        subgraphs: s.service.subgraphs(),
        maxFirst: s.opts.maxFirst,
        maxSkip: s.opts.maxSkip,
      });
    case '/_sandbox/advance': {
      const blocks = Number(body.blocks ?? 1);
      for (const w of s.service.worldsInUse(chainId)) w.tl.advance(blocks);
      return send(res, 200, { chains: heads() });
    }
    case '/_sandbox/redeploy': {
      // The named subgraph `name` now serves `to`'s version (graph-node moving a subgraph name to a new deployment).
      try {
        s.service.redeploy(String(body.name), String(body.to));
      } catch (e) {
        return send(res, 400, { error: (e as Error).message });
      }
      return send(res, 200, { name: body.name, servedAs: s.service.servedAs(String(body.name)) });
    }
    case '/_sandbox/reorg': {
      const depth = Number(body.depth ?? 1);
      const from = s.service.worldsInUse(chainId).map((w) => ({ chainId: w.chainId, fromBlock: w.tl.reorg(depth) }));
      return send(res, 200, { reorged: from, chains: heads() });
    }
    case '/_sandbox/faults':
      if (req.method === 'POST') {
        if (typeof body.faults === 'string') s.faults.rates = parseFaults(body.faults);
        if (body.rateLimit !== undefined) s.limiter.rate = Number(body.rateLimit);
        if (body.latencyMs !== undefined) s.latencyMs = Number(body.latencyMs);
        if (body.latencyPerRowMs !== undefined) s.latencyPerRowMs = Number(body.latencyPerRowMs);
        if (body.lagBlocks !== undefined) s.service.lag.blocks = Number(body.lagBlocks);
        if (body.silentDrop !== undefined || body.silentDropEntities !== undefined) {
          try {
            s.silentDrop.configure(body.silentDrop ?? s.silentDrop.rate, body.silentDropEntities);
          } catch (e) {
            return send(res, 400, { error: (e as Error).message });
          }
        }
      }
      return send(res, 200, {
        faults: s.faults.rates,
        rateLimit: s.limiter.rate,
        latencyMs: s.latencyMs,
        latencyPerRowMs: s.latencyPerRowMs,
        lagBlocks: s.service.lag.blocks,
        silentDrop: s.silentDrop.rate,
        silentDropEntities: [...s.silentDrop.entities],
      });
    case '/_sandbox/dropped':
      // The rows answers left out silently, in order; a POST also forgets them.
      if (req.method === 'POST') return send(res, 200, { dropped: s.silentDrop.forget() });
      return send(res, 200, { dropped: s.silentDrop.dropped });
    case '/_sandbox/garbage':
      if (req.method === 'POST') {
        try {
          s.garbage = parseGarbage(body, s.service.schemaModels());
        } catch (e) {
          return send(res, 400, { error: (e as Error).message });
        }
      }
      return send(res, 200, { garbage: s.garbage ?? null });
    case '/_sandbox/stats':
      if (req.method === 'POST') Object.assign(s.stats, newStats(), { inFlight: s.stats.inFlight });
      return send(res, 200, s.stats);
    case '/_sandbox/rows':
      return void rows(s, url, res).catch((e: Error) => res.destroy(e));
    default:
      return send(res, 404, { error: `unknown control path ${url.pathname}` });
  }
}

/**
 * Every row of one entity at the head (or a block), as NDJSON, for tests that compare an export with its source;
 * `fields=id,amountIn` keeps only those fields; `interval=hour` asks an aggregation's rows at that interval. Written in chunks that wait for the socket to drain, so that millions
 * of rows stream in bounded memory.
 */
async function rows(s: ControlTarget, url: URL, res: ServerResponse): Promise<void> {
  // A named subgraph by `subgraph=NAME`, or by `schema=NAME` as DODO's schemas are asked.
  const asSchema = url.searchParams.get('schema');
  const subgraph = url.searchParams.get('subgraph') ?? (asSchema && s.service.named.has(asSchema) ? asSchema : null);
  if (subgraph !== null && !s.service.named.has(subgraph)) return send(res, 404, { error: 'unknown subgraph' });
  const schema = subgraph ?? canonicalSchema(url.searchParams.get('schema') ?? 'dodoex') ?? 'dodoex';
  const chain = url.searchParams.get('chainId');
  const chainId = chain === null ? s.service.chainIds[0]! : (s.service.chainOfSegment(chain) ?? Number(chain));
  const dep = s.service.deployment(chainId, schema);
  // An aggregation's rows at one interval: `entity=TokenStats&interval=hour`.
  const entity = url.searchParams.get('entity') ?? '';
  const interval = url.searchParams.get('interval');
  const table = dep.tables.get(interval === null ? entity : aggregationKey(entity, interval));
  if (!table) return send(res, 404, { error: 'unknown entity' });
  const view = { at: Number(url.searchParams.get('block') ?? dep.tl.head), epoch: dep.tl.epoch };
  const fields = url.searchParams.get('fields')?.split(',');
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  const names = s.garbage?.mode === 'hostile' && s.garbage.case === 'names';
  let chunk = '';
  const flush = async () => {
    if (!res.write(chunk))
      await new Promise((r) => {
        res.once('drain', r);
        res.once('close', r);
      });
    chunk = '';
  };
  for (const g of table.groups(view, 'asc')) {
    for (const r of g) {
      let row = r as Record<string, unknown>;
      if (names) {
        // The rows as the answers show them under hostile names (a copy: the stored row stays as it was).
        row = JSON.parse(JSON.stringify(r)) as Record<string, unknown>;
        hostileNames(row);
      }
      chunk += `${JSON.stringify(fields ? Object.fromEntries(fields.map((f) => [f, row[f]])) : row)}\n`;
      if (chunk.length > 1 << 18) {
        await flush();
        if (res.destroyed) return;
      }
    }
  }
  if (chunk) await flush();
  res.end();
}
