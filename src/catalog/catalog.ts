/**
 * The catalog of datasets: every entity of the three subgraph schemas plus the liquidity list. Each dataset declares its
 * entity, columns and types, key, cursor kind and table once; queries, DDL and row mapping derive from it. Root query
 * field names are not here: each endpoint's introspection names them (`upstream/endpoint-probe.ts`).
 */

import { UsageError } from '../errors.ts';
import { canonicalSchema, type EntityModel, loadSchemaModel, SUBGRAPH_SCHEMAS } from '../schemas/entity-model.ts';
import { closest } from '../util/suggest.ts';
import type { Column } from './column.ts';
import { fieldColumn } from './column.ts';
import { LIST_COLUMNS } from './liquidity-list.ts';
import { tableOf } from './names.ts';

export type { Column, ColumnClass, StructType } from './column.ts';

/** How a dataset is paged (see DESIGN.md, cursor rules). */
export type CursorKind = 'event' | 'bucket' | 'mutable' | 'snapshot' | 'list';

/** A dataset to export. */
export interface Dataset {
  /** `<warehouse schema>.<table>`, e.g. `dodoex.swaps`. */
  readonly name: string;
  /** Upstream schema: `dodoex`, `token`, `mine`, or `list`. */
  readonly schema: string;
  /** The upstream entity type (`Swap`); its root field is looked up by this type on each endpoint. */
  readonly entity: string;
  readonly kind: CursorKind;
  /** The ordered field of the keyset besides `id`: `timestamp`, `date`, `hour`, `updatedAt`; none for id-only paging. */
  readonly seq?: string;
  /** GraphQL type of `seq`, for query variables. */
  readonly seqType?: 'BigInt' | 'Int';
  /** Warehouse table (schema-qualified). */
  readonly table: string;
  readonly columns: readonly Column[];
  /**
   * The GraphQL type of `id` where it is not `ID` (a subgraph's `Bytes`, `String` or `Int8` ids): the type of the
   * variables that page and look up by id. Stored as text, but an `Int8` id as BIGINT.
   */
  readonly idType?: 'Bytes' | 'String' | 'Int8';
  /**
   * For an aggregation of a subgraph (`@aggregation`): the interval its rows are asked at, one dataset per interval,
   * and the GraphQL type of its `timestamp`. Its rows come newest first, by `(timestamp, id)`.
   */
  readonly aggregation?: { readonly interval: string; readonly timestampType: string };
  /**
   * The names earlier versions gave this dataset and its table (a subgraph's, by the rules before `names.ts`: `uni.new_tt_ls`
   * and `uni.erc20_transfers` for `uni.erc20_transfers`): a warehouse that has one is renamed on its next run
   * (`store/warehouse.ts`).
   */
  readonly formerly?: readonly string[];
  /**
   * A subgraph's immutable entity read as a mutable one (by id, then `_change_block` from the re-read window): it has
   * no time in seconds to page by (a timeseries' `Timestamp`, or none). Its rows never change, so it keeps no history
   * table path (`lake/layout.ts`, `hasHistory`).
   */
  readonly immutable?: boolean;
}

/** Warehouse schema per upstream schema (a subgraph added by name registers its own: `subgraphs.ts`). */
export const WAREHOUSE_SCHEMA: Record<string, string> = {
  dodoex: 'dodoex',
  token: 'token',
  mine: 'mine',
  list: 'list',
};

/** Immutable event entities: paged by `(timestamp, id)`. */
const EVENTS = new Set([
  'Swap',
  'OrderHistory',
  'LiquidityHistory',
  'BidHistory',
  'PositiveSlippage',
  'IncentiveRewardHistory',
  'Transaction',
  'FlashLoan',
]);
/** Entities with a single global row: a full snapshot each run, kept as a time series. */
const SNAPSHOTS = new Set(['DodoZoo', 'DodoToken', 'TradingIncentive']);

function kindOf(e: EntityModel): { kind: CursorKind; seq?: string; seqType?: 'BigInt' | 'Int' } {
  if (SNAPSHOTS.has(e.name)) return { kind: 'snapshot' };
  if (EVENTS.has(e.name) && e.field.get('timestamp')) return { kind: 'event', seq: 'timestamp', seqType: 'BigInt' };
  for (const b of ['date', 'hour'])
    if (e.field.get(b)?.type === 'Int') return { kind: 'bucket', seq: b, seqType: 'Int' };
  if (e.field.get('updatedAt')) return { kind: 'mutable', seq: 'updatedAt', seqType: 'BigInt' };
  return { kind: 'snapshot' };
}

function subgraphDatasets(schema: string): Dataset[] {
  const model = loadSchemaModel(schema);
  return model.entities.map((e) => {
    const columns = e.fields
      .map((f) => fieldColumn(f, { model, entity: e.name }))
      .filter((c): c is Column => c !== undefined);
    const name = `${WAREHOUSE_SCHEMA[schema]}.${tableOf(e.name)}`;
    return { name, schema, entity: e.name, table: name, columns, ...kindOf(e) };
  });
}

/** The liquidity-list dataset: one snapshot of every pool per run. */
export const LIQUIDITY_DATASET: Dataset = {
  name: 'list.liquidity',
  schema: 'list',
  entity: 'LiquidityLqList',
  kind: 'list',
  table: 'list.liquidity',
  columns: LIST_COLUMNS,
};

const ALL: Dataset[] = [LIQUIDITY_DATASET, ...SUBGRAPH_SCHEMAS.flatMap(subgraphDatasets)];

/** Every dataset, in a stable order: DODO's, then those of the subgraphs registered (`subgraphs.ts`). */
export const DATASETS: readonly Dataset[] = ALL;

const BY_NAME = new Map(DATASETS.map((d) => [d.name, d]));

/**
 * Adds a subgraph's datasets to the catalog (at start, before any module walks it); with `replacing`, those of that
 * warehouse schema are taken out first (the subgraph's configuration read again with another schema or types: a
 * long-running process after `subgraph refresh`).
 */
export function registerDatasets(datasets: readonly Dataset[], replacing?: string): void {
  if (replacing !== undefined)
    for (let i = ALL.length - 1; i >= 0; i--)
      if (ALL[i]!.schema === replacing) BY_NAME.delete(ALL.splice(i, 1)[0]!.name);
  for (const d of datasets) {
    if (BY_NAME.has(d.name)) throw new Error(`dataset ${d.name} is registered twice`);
    ALL.push(d);
    BY_NAME.set(d.name, d);
  }
}

/** Looks a dataset up by name; `mine-v3.x` and `exchange.x` are accepted for `mine.x` and `dodoex.x`. */
export function findDataset(name: string): Dataset | undefined {
  const [schema = '', table = ''] = name.split('.');
  return BY_NAME.get(`${schema === 'list' ? 'list' : (canonicalSchema(schema) ?? schema)}.${table}`);
}

/**
 * The dataset of a name a user typed (as `findDataset` reads it), or a usage error that suggests the nearest name and
 * says where the list is.
 */
export function datasetNamed(name: string): Dataset {
  const ds = findDataset(name);
  if (ds) return ds;
  const near = closest(
    name,
    DATASETS.map((d) => d.name),
  );
  throw new UsageError(
    `unknown dataset "${name}"${near ? `; did you mean ${near}?` : ''} (\`pool-export datasets\` lists them)`,
  );
}
