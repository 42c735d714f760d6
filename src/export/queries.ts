/** GraphQL documents derived from the catalog: one per dataset and cursor shape, with every value passed as a variable. */
import type { Dataset } from '../catalog/catalog.ts';
import { listQuery } from '../catalog/liquidity-list.ts';

/**
 * The page shapes a paginator sends. `null-id` pages by id through the rows whose `seq` is null (graph-node's
 * `updatedAt_gte` never matches a null, so such rows need their own pass); `changed-since` pages by id through the rows
 * changed at or after block `$since` (`_change_block`, graph-node v0.27.0 and later).
 */
export type PageShape =
  | 'seq-first'
  | 'seq-next'
  | 'range-first'
  | 'range-next'
  | 'id'
  | 'null-id'
  | 'changed-since'
  | AggregationShape;

/**
 * The page shapes of an aggregation, whose rows come by `(timestamp, id)` descending: the first page, the next after
 * `($ts, $id)`, and both among the rows written at or after block `$since`.
 */
export type AggregationShape = 'agg-first' | 'agg-next' | 'agg-changed-first' | 'agg-changed-next';

/** The GraphQL type of a dataset's id (`ID` but for a subgraph's `Bytes`, `String` or `Int8` ids). */
export const idType = (ds: Pick<Dataset, 'idType'>): string => ds.idType ?? 'ID';

/**
 * The id a pass by id starts after: '' (every text sorts after it), or the least Int8 for Int8 ids, which are numbers
 * (an id of exactly -2^63 would be skipped: timeseries ids count from 1).
 */
export const firstId = (ds: Pick<Dataset, 'idType'>): string => (ds.idType === 'Int8' ? '-9223372036854775808' : '');

/** Which of `$ids` an entity collection still holds at `$block`: only their ids are asked for. */
export function presentQuery(root: string, ds: Pick<Dataset, 'idType' | 'aggregation'> = {}): string {
  const interval = ds.aggregation ? `interval: ${ds.aggregation.interval}, ` : '';
  return `query Present($first: Int!, $block: Int!, $ids: [${idType(ds)}!]!) { rows: ${root}(first: $first, block: { number: $block }, ${interval}where: { id_in: $ids }) { id } }`;
}

/** The selection set of a dataset. */
export function selection(ds: Dataset): string {
  return ds.columns.map((c) => c.select).join(' ');
}

/** A page query's parts: its variables' declarations (`$first: Int!, …`) and its one collection field, unaliased. */
export interface PageField {
  readonly vars: string;
  readonly field: string;
}

/**
 * A page query of `root` (the endpoint's collection field of the dataset's entity) pinned to `$block`. `seq-first`
 * starts at `$from` inclusive; `seq-next` continues after `($seq, $id)`.
 */
export function pageQuery(ds: Dataset, root: string, shape: PageShape): string {
  const { vars, field } = pageField(ds, root, shape);
  return `query Page(${vars}) { rows: ${field} }`;
}

/** The parts of `pageQuery`, which a batch of several datasets' first pages puts under aliases of one query. */
export function pageField(ds: Dataset, root: string, shape: PageShape): PageField {
  const sel = selection(ds);
  const head = `$first: Int!, $block: Int!`;
  const id = idType(ds);
  const rows = (args: string, vars: string): PageField => ({
    vars: `${head}${vars}`,
    field: `${root}(first: $first, block: { number: $block }, ${args}) { ${sel} }`,
  });
  if (ds.aggregation) return aggregationPage(ds, rows, shape);
  if (shape === 'id') return rows('orderBy: id, orderDirection: asc, where: { id_gt: $id }', `, $id: ${id}!`);
  if (shape === 'changed-since')
    return rows(
      'orderBy: id, orderDirection: asc, where: { id_gt: $id, _change_block: { number_gte: $since } }',
      `, $id: ${id}!, $since: Int!`,
    );
  const seq = ds.seq!;
  if (shape === 'null-id')
    return rows(`orderBy: id, orderDirection: asc, where: { ${seq}: null, id_gt: $id }`, `, $id: ${id}!`);
  const t = ds.seqType!;
  // A shard of the key range: the same keyset, bounded above by `$to` (exclusive).
  if (shape === 'range-first')
    return rows(
      `orderBy: ${seq}, orderDirection: asc, where: { ${seq}_gte: $from, ${seq}_lt: $to }`,
      `, $from: ${t}!, $to: ${t}!`,
    );
  if (shape === 'range-next')
    return rows(
      `orderBy: ${seq}, orderDirection: asc, where: { or: [{ ${seq}_gt: $seq, ${seq}_lt: $to }, { ${seq}: $seq, id_gt: $id }] }`,
      `, $seq: ${t}!, $id: ${id}!, $to: ${t}!`,
    );
  if (shape === 'seq-first')
    return rows(`orderBy: ${seq}, orderDirection: asc, where: { ${seq}_gte: $from }`, `, $from: ${t}!`);
  // Keyset on (seq, id): a strict `seq_gt` alone would lose rows that share the boundary value.
  return rows(
    `orderBy: ${seq}, orderDirection: asc, where: { or: [{ ${seq}_gt: $seq }, { ${seq}: $seq, id_gt: $id }] }`,
    `, $seq: ${t}!, $id: ${id}!`,
  );
}

/** A page of an aggregation at its interval: newest first, the keyset on `(timestamp, id)` descending. */
function aggregationPage(ds: Dataset, rows: (args: string, vars: string) => PageField, shape: PageShape): PageField {
  const { interval, timestampType } = ds.aggregation!;
  const changed = shape === 'agg-changed-first' || shape === 'agg-changed-next';
  // Every filter is repeated inside each `or` branch: graph-node refuses column filters beside `or`.
  const since = changed ? ', _change_block: { number_gte: $since }' : '';
  const sinceVar = changed ? ', $since: Int!' : '';
  if (shape === 'agg-first' || shape === 'agg-changed-first')
    return rows(`interval: ${interval}${changed ? `, where: { ${since.slice(2)} }` : ''}`, sinceVar);
  if (shape === 'agg-next' || shape === 'agg-changed-next')
    return rows(
      `interval: ${interval}, where: { or: [{ timestamp_lt: $ts${since} }, { timestamp: $ts, id_lt: $id${since} }] }`,
      `, $ts: ${timestampType}!, $id: ${idType(ds)}!${sinceVar}`,
    );
  throw new Error(`${ds.name} is an aggregation: it is paged newest first, not by ${shape}`);
}

/** The liquidity-list operation, selecting every field the catalog stores. */
export const LIST_QUERY = listQuery();
