/**
 * Reads the upstream's counters for `verify`: the rows of a counter entity at a pinned block (the block the checked
 * rows were read at), paged by id, filtered to the days checked where the entity is per day. Each request is retried
 * as a task's are, and counted.
 */
import type { Config } from '../config/config.ts';
import { UpstreamError } from '../errors.ts';
import type { Endpoint, UpstreamClient } from '../upstream/client.ts';
import { type EndpointInfo, endpointInfo, PROBE_QUERY, type ProbeAnswer } from '../upstream/endpoint-probe.ts';
import { withRetries } from '../upstream/retry.ts';
import type { CounterSource, CounterValue } from './identities.ts';

/** Days as Unix seconds of their starts, first and last included. */
export interface DayRange {
  readonly first: number;
  readonly last: number;
}

/** The query of one page of a counter entity. */
export function counterQuery(root: string, source: Pick<CounterSource, 'select' | 'byDay'>, first: number): string {
  const days = source.byDay ? ', $from: Int!, $to: Int!' : '';
  const where = source.byDay ? 'id_gt: $id, date_gte: $from, date_lte: $to' : 'id_gt: $id';
  return `query Counters($block: Int!, $id: ID!${days}) { rows: ${root}(first: ${first}, block: { number: $block }, orderBy: id, orderDirection: asc, where: { ${where} }) { ${source.select} } }`;
}

/** What one read of a counter source is known by: the same read serves every identity that asks for it. */
function readKey(endpoint: Endpoint, source: CounterSource, at: { block: number; days?: DayRange }): string {
  return JSON.stringify([
    endpoint.url,
    source.entity,
    source.select,
    at.block,
    source.byDay ? (at.days ?? null) : null,
  ]);
}

/** Reads counters from one endpoint per chain and schema, counting its requests. */
export class CounterReader {
  /** Requests sent (probes included). */
  requests = 0;
  private readonly probes = new Map<string, Promise<EndpointInfo>>();
  private readonly reads = new Map<string, Promise<Record<string, unknown>[]>>();

  /**
   * `probed`: what probes of this run found of routes already (a run's own probe of each route it read, moments
   * before): those routes are not probed again.
   */
  constructor(
    private readonly client: UpstreamClient,
    private readonly config: Pick<Config, 'maxAttempts' | 'pageSize'>,
    probed: ReadonlyMap<string, EndpointInfo> = new Map(),
  ) {
    for (const [url, info] of probed) this.probes.set(url, Promise.resolve(info));
  }

  /** One request, retried. */
  private send<T>(endpoint: Endpoint, query: string, vars: Record<string, unknown>): Promise<T> {
    return withRetries(
      async () => {
        this.requests++;
        return (await this.client.request<T>(endpoint, query, vars)).data;
      },
      { maxAttempts: this.config.maxAttempts },
    );
  }

  /** What an endpoint serves: its head and the root collection field of each entity (one probe per endpoint). */
  private probe(endpoint: Endpoint): Promise<EndpointInfo> {
    let r = this.probes.get(endpoint.url);
    if (!r) {
      r = this.send<ProbeAnswer>(endpoint, PROBE_QUERY, {}).then((a) => endpointInfo(a));
      this.probes.set(endpoint.url, r);
    }
    return r;
  }

  /** The root collection field of each entity at an endpoint. */
  private async rootsOf(endpoint: Endpoint): Promise<ReadonlyMap<string, string>> {
    return (await this.probe(endpoint)).roots;
  }

  /**
   * The first of a chain's routes that has indexed `block` (a route behind it cannot answer for it: a run may have
   * read from a fresher standby); the first route when none answers or none has.
   */
  async routeAt(routes: readonly Endpoint[], block: number): Promise<Endpoint> {
    for (const r of routes) {
      const info = await this.probe(r).catch(() => undefined);
      if (info && info.head.number >= block) return r;
    }
    return routes[0]!;
  }

  /**
   * The counters of `source` at `block` on `endpoint` (for an entity per day, of the days in `days`); read once for
   * every identity that asks for the same.
   */
  async read(
    endpoint: Endpoint,
    source: CounterSource,
    at: { block: number; days?: DayRange },
  ): Promise<CounterValue[]> {
    const key = readKey(endpoint, source, at);
    let r = this.reads.get(key);
    if (!r) {
      r = this.readAll(endpoint, source, at);
      this.reads.set(key, r);
    }
    // The rows are shared; each identity reads its own counter from them.
    return (await r).map((row) => source.value(row));
  }

  /**
   * Reads the first page of every counter source asked for of each endpoint in one request (one alias each), so that a
   * verification of a few days costs a request per endpoint; sources with more rows read on, page by page, when
   * `read` asks for them.
   */
  async prefetch(
    asks: readonly { endpoint: Endpoint; source: CounterSource; at: { block: number; days?: DayRange } }[],
  ): Promise<void> {
    const byEndpoint = new Map<string, typeof asks>();
    for (const a of asks) {
      if (this.reads.has(readKey(a.endpoint, a.source, a.at))) continue;
      byEndpoint.set(a.endpoint.url, [...(byEndpoint.get(a.endpoint.url) ?? []), a]);
    }
    await Promise.all(
      [...byEndpoint.values()].map(async (list) => {
        const endpoint = list[0]!.endpoint;
        const roots = await this.rootsOf(endpoint).catch(() => undefined);
        const distinct = new Map<string, (typeof list)[number]>();
        for (const a of list) if (roots?.has(a.source.entity)) distinct.set(readKey(a.endpoint, a.source, a.at), a);
        if (!distinct.size) return;
        const size = this.config.pageSize;
        const entries = [...distinct.entries()];
        const fields = entries.map(([, a], i) => {
          const days = a.source.byDay && a.at.days ? `, date_gte: ${a.at.days.first}, date_lte: ${a.at.days.last}` : '';
          const root = roots!.get(a.source.entity)!;
          return `c${i}: ${root}(first: ${size}, block: { number: ${Math.trunc(a.at.block)} }, orderBy: id, orderDirection: asc, where: { id_gt: ""${days} }) { ${a.source.select} }`;
        });
        const answer = this.send<Record<string, Record<string, unknown>[]>>(endpoint, `{ ${fields.join(' ')} }`, {});
        entries.forEach(([key, a], i) => {
          const first = answer.then((data) => data[`c${i}`] ?? []);
          // A full first page: the rest is read on from its last id.
          const all = first.then((rows) =>
            rows.length < size ? rows : this.readAll(a.endpoint, a.source, { ...a.at, first: rows }),
          );
          all.catch(() => undefined);
          this.reads.set(key, all);
        });
        await answer.catch(() => undefined);
      }),
    );
  }

  private async readAll(
    endpoint: Endpoint,
    source: CounterSource,
    at: { block: number; days?: DayRange; first?: readonly Record<string, unknown>[] },
  ): Promise<Record<string, unknown>[]> {
    const first = at.first ?? [];
    const root = (await this.rootsOf(endpoint)).get(source.entity);
    if (root === undefined)
      throw new UpstreamError(`the ${source.schema} deployment at ${endpoint.label} has no ${source.entity} entity`, {
        kind: 'graphql',
        retryable: false,
      });
    const size = this.config.pageSize;
    const query = counterQuery(root, source, size);
    const days = source.byDay && at.days ? { from: at.days.first, to: at.days.last } : {};
    const out: Record<string, unknown>[] = [...first];
    for (let id = first.length ? String(first[first.length - 1]!.id) : ''; ; ) {
      const rows = (
        await this.send<{ rows: Record<string, unknown>[] }>(endpoint, query, { block: at.block, id, ...days })
      ).rows;
      out.push(...rows);
      if (rows.length < size) return out;
      id = String(rows[rows.length - 1]!.id);
    }
  }
}
