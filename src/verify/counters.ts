/**
 * Reads the upstream's counters for `verify`: the rows of a counter entity at a pinned block (the block the checked
 * rows were read at), paged by id, filtered to the days checked where the entity is per day. Each request is retried
 * as a task's are, and counted.
 */
import type { Config } from '../config/config.ts';
import { UpstreamError } from '../errors.ts';
import type { Endpoint, UpstreamClient } from '../upstream/client.ts';
import { endpointInfo, PROBE_QUERY, type ProbeAnswer } from '../upstream/endpoint-probe.ts';
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

/** Reads counters from one endpoint per chain and schema, counting its requests. */
export class CounterReader {
  /** Requests sent (probes included). */
  requests = 0;
  private readonly roots = new Map<string, Promise<ReadonlyMap<string, string>>>();
  private readonly reads = new Map<string, Promise<Record<string, unknown>[]>>();

  constructor(
    private readonly client: UpstreamClient,
    private readonly config: Pick<Config, 'maxAttempts' | 'pageSize'>,
  ) {}

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

  /** The root collection field of each entity at an endpoint (one probe per endpoint). */
  private rootsOf(endpoint: Endpoint): Promise<ReadonlyMap<string, string>> {
    let r = this.roots.get(endpoint.url);
    if (!r) {
      r = this.send<ProbeAnswer>(endpoint, PROBE_QUERY, {}).then((a) => endpointInfo(a).roots);
      this.roots.set(endpoint.url, r);
    }
    return r;
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
    const key = JSON.stringify([endpoint.url, source.entity, source.select, at.block, at.days ?? null]);
    let r = this.reads.get(key);
    if (!r) {
      r = this.readAll(endpoint, source, at);
      this.reads.set(key, r);
    }
    // The rows are shared; each identity reads its own counter from them.
    return (await r).map((row) => source.value(row));
  }

  private async readAll(
    endpoint: Endpoint,
    source: CounterSource,
    at: { block: number; days?: DayRange },
  ): Promise<Record<string, unknown>[]> {
    const root = (await this.rootsOf(endpoint)).get(source.entity);
    if (root === undefined)
      throw new UpstreamError(`the ${source.schema} deployment at ${endpoint.label} has no ${source.entity} entity`, {
        kind: 'graphql',
        retryable: false,
      });
    const size = this.config.pageSize;
    const query = counterQuery(root, source, size);
    const days = source.byDay && at.days ? { from: at.days.first, to: at.days.last } : {};
    const out: Record<string, unknown>[] = [];
    for (let id = ''; ; ) {
      const rows = (
        await this.send<{ rows: Record<string, unknown>[] }>(endpoint, query, { block: at.block, id, ...days })
      ).rows;
      out.push(...rows);
      if (rows.length < size) return out;
      id = String(rows[rows.length - 1]!.id);
    }
  }
}
