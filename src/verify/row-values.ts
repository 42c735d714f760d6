/**
 * `verify --values`: every stored row's values against the upstream's at the block the dataset's checkpoint names, for
 * DODO's datasets and any subgraph's alike. Each dataset is read again as its export reads it by id (an aggregation
 * newest first down its keyset), with its lists of references whole (`export/long-lists.ts`), every value checked by
 * the export's own mapper; then, page by page, the stored rows of those ids are read back as the upstream's texts (the
 * exact `_text` of a number, an Int8 or a Timestamp's decimal text) and compared field by field. A stored number whose
 * typed column no longer matches its exact text (a value changed in the warehouse) differs too. A row missing, one the
 * upstream no longer has, and one whose values differ are each named by id; `--repair` reads the dataset again whole
 * at that block (`repair.ts`, `ids`).
 *
 * Cost: what a full re-read costs, one request per page of rows (`pageSize`, 1,000 by default) plus one per list of
 * references longer than 100 and per 1,000 items past its first 101, and one probe per route; no write. Snapshots (a
 * time series of whole reads, each kept as read) and the liquidity list (not kept by block) are not compared.
 */
import type { Column, Dataset } from '../catalog/catalog.ts';
import { isRefList, MICROS, textColumn } from '../catalog/column.ts';
import { chainsOfSchema } from '../catalog/subgraphs.ts';
import { appendRest, findLongLists, LIST_PAGE, type ListRest, restItems, restQuery } from '../export/long-lists.ts';
import { mapPage } from '../export/mapper.ts';
import { firstId, pageQuery } from '../export/queries.ts';
import { hasText, idSqlType, typedFrom } from '../store/ddl.ts';
import type { Warehouse } from '../store/warehouse.ts';
import type { Endpoint, UpstreamClient } from '../upstream/client.ts';
import { type EndpointInfo, endpointInfo, PROBE_QUERY, type ProbeAnswer } from '../upstream/endpoint-probe.ts';
import { prunedSkip } from '../upstream/upstream-error.ts';
import { redact } from '../util/redact.ts';
import { q, qt } from '../util/sql.ts';
import { type Check, prunedByHint } from './check.ts';
import type { Mismatch } from './reconcile.ts';
import type { Scopes } from './scope.ts';
import type { RowReading } from './subgraph-ids.ts';

/** The name of the identity. */
export const VALUES_IDENTITY = 'row values';

/** Rows named one by one per dataset and chain; past them, one line with how many more differ. */
const SHOWN = 50;

/** A stored column as the upstream's value (the text of a number, an Int8 or a Timestamp), named as the column. */
function asUpstream(c: Column): string {
  const col = q(c.column);
  if (hasText(c)) return `${q(textColumn(c))} AS ${col}`;
  if (c.cls === 'int8') return `CAST(${col} AS VARCHAR) AS ${col}`;
  if (c.cls === 'list' && c.elem === 'int8') return `CAST(${col} AS VARCHAR[]) AS ${col}`;
  if (c.cls === 'timestamp') return `CAST(epoch_us(${col}) // ${MICROS[c.unit ?? 'us']} AS VARCHAR) AS ${col}`;
  return col;
}

/** Whether a stored number's typed column is what its exact text makes (as the export typed it), by column. */
const typedOk = (c: Column, i: number): string =>
  `CAST(${q(c.column)} AS VARCHAR) IS NOT DISTINCT FROM CAST(${typedFrom(c, q(textColumn(c)))} AS ${
    c.cls === 'list' ? 'VARCHAR[]' : 'VARCHAR'
  }) AS "_ok${i}"`;

/** The stored rows of some ids: their values as the upstream's, and whether each number's typed column holds. */
async function storedRows(
  w: Pick<Warehouse, 'all'>,
  at: { ds: Dataset; chainId: number; ids: readonly string[] },
): Promise<Map<string, Record<string, unknown>>> {
  const numbers = at.ds.columns.filter(hasText);
  const select = [...at.ds.columns.map(asUpstream), ...numbers.map(typedOk)].join(', ');
  const rows = await w.all(
    `SELECT ${select} FROM ${qt(at.ds.table)} WHERE chain_id = $1 AND id IN (SELECT CAST(unnest(from_json($2, '["VARCHAR"]')) AS ${idSqlType(at.ds)}))`,
    [at.chainId, JSON.stringify(at.ids)],
  );
  return new Map(rows.map((r) => [String(r.id), r]));
}

/** The fields of a row whose values differ from the upstream's, each number's typed column checked too. */
function differing(ds: Dataset, theirs: Record<string, unknown>, mine: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const c of ds.columns)
    if (JSON.stringify(theirs[c.column] ?? null) !== JSON.stringify(mine[c.column] ?? null)) out.push(c.field);
  ds.columns.filter(hasText).forEach((c, i) => {
    if (mine[`_ok${i}`] !== true && !out.includes(c.field)) out.push(`${c.field} (its typed column)`);
  });
  return out;
}

/** What one dataset's comparison reads upstream with: its route, root field, block and page size. */
interface Reading {
  readonly client: UpstreamClient;
  readonly endpoint: Endpoint;
  readonly ds: Dataset;
  readonly root: string;
  readonly block: number;
  readonly pageSize: number;
  readonly count: () => void;
}

/** The rest of every long list of references of a page's rows, read by id keyset at the block. */
async function listRests(r: Reading, items: readonly unknown[]): Promise<ListRest[]> {
  const rests: ListRest[] = [];
  for (const long of findLongLists(r.ds, items)) {
    const c = r.ds.columns.find((x) => x.field === long.field && x.cls === 'list' && isRefList(x))!;
    const ids: string[] = [];
    let after = long.after;
    for (;;) {
      r.count();
      const page = await r.client.request<unknown>(r.endpoint, restQuery(r.ds, r.root, c), {
        first: LIST_PAGE,
        block: r.block,
        id: long.id,
        after,
      });
      const got = restItems(page.data, long);
      ids.push(...got);
      if (got.length < LIST_PAGE) break;
      after = got[got.length - 1]!;
    }
    rests.push({ id: long.id, field: long.field, ids });
  }
  return rests;
}

/** Compares one dataset on one chain; returns the mismatches and the rows compared. */
async function compareOne(
  w: Pick<Warehouse, 'all'>,
  r: Reading,
  chainId: number,
): Promise<{ mismatches: Mismatch[]; rows: number }> {
  const { ds } = r;
  const named: { id: string; expected: number; found: number; detail?: string }[] = [];
  const seen = new Set<string>();
  let last: { id: string; timestamp?: string } | undefined;
  for (;;) {
    const vars: Record<string, unknown> = { first: r.pageSize, block: r.block };
    if (!ds.aggregation) vars.id = last?.id ?? firstId(ds);
    else if (last) Object.assign(vars, { ts: last.timestamp, id: last.id });
    const shape = !ds.aggregation ? 'id' : last ? 'agg-next' : 'agg-first';
    r.count();
    const page = await r.client.request<{ rows: Record<string, unknown>[] }>(
      r.endpoint,
      pageQuery(ds, r.root, shape),
      vars,
    );
    const items = page.data.rows;
    appendRest(items, await listRests(r, items));
    const theirs = mapPage(ds, chainId, items).rows;
    const ids = theirs.map((x) => String(x.id));
    const mine = await storedRows(w, { ds, chainId, ids });
    theirs.forEach((row, i) => {
      const id = ids[i]!;
      seen.add(id);
      const stored = mine.get(id);
      if (!stored) named.push({ id, expected: 1, found: 0 });
      else {
        const fields = differing(ds, row, stored);
        if (fields.length) named.push({ id, expected: 1, found: 1, detail: `values of ${fields.join(', ')}` });
      }
    });
    if (items.length < r.pageSize) break;
    const end = items[items.length - 1]!;
    last = { id: String(end.id), ...(end.timestamp !== undefined ? { timestamp: String(end.timestamp) } : {}) };
  }
  const stored = await w.all(`SELECT CAST(id AS VARCHAR) AS id FROM ${qt(ds.table)} WHERE chain_id = $1`, [chainId]);
  for (const s of stored) if (!seen.has(String(s.id))) named.push({ id: String(s.id), expected: 0, found: 1 });
  const m = (x: { id: string | null; expected: number; found: number; detail?: string }): Mismatch => ({
    chainId,
    dataset: ds.name,
    identity: VALUES_IDENTITY,
    day: null,
    key: x.id,
    keyKind: x.id === null ? null : 'id',
    expected: x.expected,
    found: x.found,
    ...(x.detail ? { detail: x.detail } : {}),
  });
  const mismatches = named.slice(0, SHOWN).map(m);
  if (named.length > SHOWN)
    mismatches.push(
      m({ id: null, expected: seen.size, found: stored.length, detail: `${named.length - SHOWN} more rows differ` }),
    );
  return { mismatches, rows: seen.size };
}

/** The first route that has indexed a block, with what its probe says (a route behind it cannot answer for it). */
async function routeAt(
  client: UpstreamClient,
  at: { routes: readonly Endpoint[]; block: number; count: () => void; probes: Map<string, Promise<EndpointInfo>> },
): Promise<{ endpoint: Endpoint; info: EndpointInfo }> {
  let first: { endpoint: Endpoint; info: EndpointInfo } | undefined;
  for (const endpoint of at.routes) {
    let probe = at.probes.get(endpoint.url);
    if (!probe) {
      at.count();
      probe = client.request<ProbeAnswer>(endpoint, PROBE_QUERY, {}).then((a) => endpointInfo(a.data));
      at.probes.set(endpoint.url, probe);
    }
    const info = await probe;
    first ??= { endpoint, info };
    if (info.head.number >= at.block) return { endpoint, info };
  }
  if (!first) throw new Error('no route');
  return first;
}

/** The value checks of the datasets asked for, on the chains asked for. */
export async function valueChecks(
  req: RowReading & {
    /** A dataset's routes on a chain, in order of preference; none where it is not read there. */
    readonly routes: (ds: Dataset, chainId: number) => readonly Endpoint[];
  },
  scopes: Scopes,
  of: readonly Dataset[],
): Promise<{ checks: Check[]; requests: number }> {
  let requests = 0;
  const count = () => {
    requests++;
  };
  const probes = new Map<string, Promise<EndpointInfo>>();
  const checks: Check[] = [];
  for (const ds of of) {
    if (ds.kind === 'list' || (req.datasets && !req.datasets.has(ds.name))) continue;
    // A subgraph's dataset is read on its deployments' chains alone: the others are none of its business.
    const deployed = chainsOfSchema(ds.schema);
    for (const chainId of req.chains.filter((c) => !deployed || deployed.includes(c))) {
      const base = { chainId, identity: VALUES_IDENTITY, dataset: ds.name, days: null };
      const scope = scopes.of(chainId, ds);
      // A dataset never exported on the chain is named only when asked for by name.
      if ('skip' in scope && !req.datasets) continue;
      const skipped =
        ds.kind === 'snapshot'
          ? 'a snapshot keeps each whole read as it was; verify --values compares the entities read by id'
          : 'skip' in scope
            ? scope.skip
            : !scope.complete
              ? 'its last pass did not end; a run that ends well makes it checkable'
              : undefined;
      const block = 'skip' in scope ? null : scope.block;
      if (skipped || block === null) {
        checks.push({ ...base, block, groups: 0, mismatches: [], skipped: skipped ?? 'it was never exported' });
        continue;
      }
      const routes = req.routes(ds, chainId);
      if (!routes.length) continue;
      try {
        const { endpoint, info } = await routeAt(req.client, { routes, block, count, probes });
        const pruned = prunedByHint(ds, chainId, { head: info.head.number, block });
        if (pruned) {
          checks.push({ ...base, block, groups: 0, mismatches: [], skipped: pruned });
          continue;
        }
        const root = info.roots.get(ds.entity);
        if (!root) throw new Error(`the route ${endpoint.label} has no root field of ${ds.entity}`);
        const reading = { client: req.client, endpoint, ds, root, block, pageSize: req.pageSize, count };
        const { mismatches, rows } = await compareOne(req.warehouse, reading, chainId);
        checks.push({ ...base, block, groups: rows, mismatches });
      } catch (e) {
        const skipped = prunedSkip(e, block);
        const error = redact((e as Error).message, req.secrets);
        checks.push({ ...base, block, groups: 0, mismatches: [], ...(skipped ? { skipped } : { error }) });
      }
    }
  }
  return { checks, requests };
}
