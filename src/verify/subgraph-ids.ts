/**
 * The identity a subgraph of any schema allows without knowing its mappings: its row ids. graph-node counts nothing
 * (no `count` field, no aggregate over a collection), and a subgraph's own figures (`poolCount`, `txCount`) mean what
 * its mappings make them mean, which pool-export does not know. What holds for every schema is that the ids an entity
 * has at a block are the ids a complete copy of it holds: so each dataset's ids are paged from its deployment at the
 * block its checkpoint names (by `id_gt`, ids alone; an aggregation down its `(timestamp, id)` keyset), and compared
 * with the stored ones. A missing id is a row lost; an extra one, a row the upstream no longer has (a reorganisation
 * older than the re-read window, or an entity the mappings removed). The values are not compared: that would be the
 * export again.
 */
import type { Dataset } from '../catalog/catalog.ts';
import { chainsOfSchema, deploymentUrl, subgraphOf } from '../catalog/subgraphs.ts';
import { firstId, pageQuery } from '../export/queries.ts';
import type { Warehouse } from '../store/warehouse.ts';
import type { Endpoint, UpstreamClient } from '../upstream/client.ts';
import { type EndpointInfo, endpointInfo, PROBE_QUERY, type ProbeAnswer } from '../upstream/endpoint-probe.ts';
import { urlEndpoint } from '../upstream/routes.ts';
import { prunedSkip } from '../upstream/upstream-error.ts';
import { redact } from '../util/redact.ts';
import { qt } from '../util/sql.ts';
import { type Check, prunedByHint } from './check.ts';
import type { Mismatch } from './reconcile.ts';
import type { Scopes } from './scope.ts';

/** The name of the identity. */
export const IDS_IDENTITY = 'row ids';

/** Ids shown one by one; past them, one line with the two counts. */
const SHOWN = 20;

/**
 * The query of one page of ids: the export's own page of the dataset (by `id_gt`, or an aggregation down its keyset),
 * selecting its id alone (and the timestamp that pages an aggregation).
 */
function idsQuery(ds: Dataset, root: string, after: boolean): string {
  const keys = ds.columns.filter((c) => c.field === 'id' || (ds.aggregation && c.field === 'timestamp'));
  const shape = !ds.aggregation ? 'id' : after ? 'agg-next' : 'agg-first';
  return pageQuery({ ...ds, columns: keys }, root, shape);
}

/** Every id of a dataset at a block, page by page. */
async function upstreamIds(
  client: UpstreamClient,
  at: { endpoint: Endpoint; ds: Dataset; root: string; block: number; pageSize: number; count: () => void },
): Promise<Set<string>> {
  const ids = new Set<string>();
  let last: { id: string; timestamp?: string } | undefined;
  for (;;) {
    const vars: Record<string, unknown> = { first: at.pageSize, block: at.block };
    if (!at.ds.aggregation) vars.id = last?.id ?? firstId(at.ds);
    else if (last) Object.assign(vars, { ts: last.timestamp, id: last.id });
    at.count();
    const page = await client.request<{ rows: { id: string; timestamp?: unknown }[] }>(
      at.endpoint,
      idsQuery(at.ds, at.root, last !== undefined),
      vars,
    );
    const rows = page.data.rows;
    for (const r of rows) ids.add(String(r.id));
    if (rows.length < at.pageSize) return ids;
    const end = rows[rows.length - 1]!;
    last = { id: String(end.id), ...(end.timestamp !== undefined ? { timestamp: String(end.timestamp) } : {}) };
  }
}

/** What a check that reads rows upstream needs: the warehouse, the client, the chains and datasets asked for. */
export interface RowReading {
  readonly warehouse: Pick<Warehouse, 'all'>;
  readonly client: UpstreamClient;
  readonly chains: readonly number[];
  readonly datasets?: ReadonlySet<string> | undefined;
  readonly pageSize: number;
  readonly secrets: readonly string[];
  /** What the run's probes found of its routes, by URL (see `VerifyRequest.probed`): those are not probed again. */
  readonly probed?: ReadonlyMap<string, EndpointInfo> | undefined;
}

/** The row-id checks of the subgraphs' datasets on the chains asked for. */
export async function subgraphIdChecks(
  req: RowReading,
  scopes: Scopes,
  of: readonly Dataset[],
): Promise<{ checks: Check[]; requests: number }> {
  let requests = 0;
  const count = () => {
    requests++;
  };
  const roots = new Map<string, Promise<Pick<EndpointInfo, 'roots' | 'head'>>>(
    [...(req.probed ?? [])].map(([url, info]) => [url, Promise.resolve(info)]),
  );
  const checks: Check[] = [];
  for (const ds of of) {
    if (!subgraphOf(ds.schema) || (req.datasets && !req.datasets.has(ds.name))) continue;
    for (const chainId of req.chains.filter((c) => chainsOfSchema(ds.schema)?.includes(c))) {
      const base = { chainId, identity: IDS_IDENTITY, dataset: ds.name, days: null };
      const scope = scopes.of(chainId, ds);
      if ('skip' in scope) {
        checks.push({ ...base, block: null, groups: 0, mismatches: [], skipped: scope.skip });
        continue;
      }
      if (!scope.complete) {
        const skipped = 'its last pass did not end; a run that ends well makes it checkable';
        checks.push({ ...base, block: scope.block, groups: 0, mismatches: [], skipped });
        continue;
      }
      const endpoint = urlEndpoint(deploymentUrl(ds.schema, chainId)!);
      try {
        let probe = roots.get(endpoint.url);
        if (!probe) {
          count();
          probe = req.client.request<ProbeAnswer>(endpoint, PROBE_QUERY, {}).then((a) => endpointInfo(a.data));
          roots.set(endpoint.url, probe);
        }
        const info = await probe;
        const pruned = prunedByHint(ds, chainId, { head: info.head.number, block: scope.block });
        if (pruned) {
          checks.push({ ...base, block: scope.block, groups: 0, mismatches: [], skipped: pruned });
          continue;
        }
        const root = info.roots.get(ds.entity);
        if (!root) throw new Error(`the deployment has no root field of ${ds.entity}`);
        const at = { endpoint, ds, root, block: scope.block, pageSize: req.pageSize, count };
        const [theirs, stored] = await Promise.all([
          upstreamIds(req.client, at),
          req.warehouse.all(`SELECT id FROM ${qt(ds.table)} WHERE chain_id = $1`, [chainId]),
        ]);
        const mine = new Set(stored.map((r) => String(r.id)));
        const missing = [...theirs].filter((id) => !mine.has(id));
        const extra = [...mine].filter((id) => !theirs.has(id));
        const m = (key: string | null, expected: number, found: number): Mismatch => ({
          chainId,
          dataset: ds.name,
          identity: IDS_IDENTITY,
          day: null,
          key,
          keyKind: key === null ? null : 'id',
          expected,
          found,
        });
        const mismatches =
          missing.length + extra.length > SHOWN
            ? [m(null, theirs.size, mine.size)]
            : [...missing.map((id) => m(id, 1, 0)), ...extra.map((id) => m(id, 0, 1))];
        checks.push({ ...base, block: scope.block, groups: 1, mismatches });
      } catch (e) {
        const skipped = prunedSkip(e, scope.block);
        const error = redact((e as Error).message, req.secrets);
        checks.push({ ...base, block: scope.block, groups: 0, mismatches: [], ...(skipped ? { skipped } : { error }) });
      }
    }
  }
  return { checks, requests };
}
