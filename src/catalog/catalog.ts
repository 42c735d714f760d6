/**
 * The catalog of datasets: every entity of the three subgraph schemas plus the liquidity list. Each dataset declares its
 * entity, columns and types, key, cursor kind and table once; queries, DDL and row mapping derive from it. Root query
 * field names are not here: each endpoint's introspection names them (`upstream/endpoint-probe.ts`).
 */

import { UsageError } from '../errors.ts';
import {
  canonicalSchema,
  type EntityModel,
  type FieldModel,
  loadSchemaModel,
  lowerCamel,
  pluralize,
  type SchemaModel,
  SUBGRAPH_SCHEMAS,
} from '../schemas/entity-model.ts';
import { closest } from '../util/suggest.ts';
import type { Column, ColumnClass, ListElement } from './column.ts';
import { refListSelect } from './column.ts';
import { LIST_COLUMNS } from './liquidity-list.ts';

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
   * The name an earlier version gave this dataset and its table (a subgraph's entity whose name has a run of capitals:
   * `uni.new_tt_ls` for `uni.new_ttls`): a warehouse that has it is renamed on its next run (`store/warehouse.ts`).
   */
  readonly formerly?: string;
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

/** snake_case of a camelCase name (`DIP3MaintainerFeeUSD` → `dip3_maintainer_fee_usd`). */
export function snake(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

const CLASS: Readonly<Record<string, ColumnClass>> = {
  ID: 'text',
  String: 'text',
  Bytes: 'text',
  Int: 'int',
  Int8: 'int8',
  Timestamp: 'timestamp',
  Boolean: 'bool',
  BigInt: 'bigint',
  BigDecimal: 'decimal',
};

/** The element class of a list of scalars by GraphQL type; a list of Timestamps stays microseconds (BIGINT[]). */
const LIST_ELEM: Readonly<Record<string, ListElement>> = {
  Int: 'int',
  Int8: 'int8',
  Timestamp: 'int8',
  Boolean: 'bool',
  BigInt: 'bigint',
  BigDecimal: 'decimal',
};

/**
 * BigInt fields that hold raw token amounts (up to 2^256) or 18-decimal fixed-point parameters, by entity, as the real
 * mappings fill them (DODOEX/dodoex_v2_subgraph 0eb5baca, src/mappings): total supplies, PMM `i`/`k` and pool state
 * `b`/`q`/`b0`/`q0`, fee rates, reward per block, staked balance. They do not fit 64 bits (nor, always, 128), so their
 * column is DOUBLE. Every other BigInt is a count, a time, a block number, a duration, decimals or a small code: BIGINT.
 */
export const RAW_AMOUNTS: Readonly<Record<string, readonly string[]>> = {
  Token: ['totalSupply'],
  LpToken: ['totalSupply'],
  Pair: ['i', 'k', 'mtFeeRate'],
  PairDetail: ['i', 'k', 'b', 'q', 'b0', 'q0'],
  CrowdPooling: ['i', 'k', 'feeRate', 'tokenCliffRate'],
  RewardDetail: ['rewardPerBlock'],
  UserStake: ['balance'],
};

/**
 * The column of a field. In a subgraph of any schema (`generic`), a BigInt may be a raw amount up to 2^256: DECIMAL(38,0)
 * (exact, NULL beyond 38 digits), with its exact text beside it, unless the subgraph's `types` says otherwise
 * (`override`: the class its SQL type names, `typeOverride`).
 */
function column(
  f: FieldModel,
  at: { model: SchemaModel; entity: string; generic?: boolean; override?: ColumnClass },
): Column | undefined {
  const { model, entity, generic = false, override } = at;
  if (f.derivedFrom) return undefined;
  if (f.list) {
    // A list of numbers or booleans is typed by its element (a BigInt as the scalar is); enums, strings, bytes and ids
    // are text.
    const elem =
      f.ref || f.enum || override === 'text'
        ? undefined
        : ((override as ListElement | undefined) ?? (f.type === 'BigInt' && generic ? 'integer' : LIST_ELEM[f.type]));
    return {
      field: f.name,
      column: snake(f.name),
      cls: 'list',
      nullable: !f.nonNull,
      select: f.ref ? refListSelect(f.name) : f.name,
      ...(f.ref ? { refIdType: refIdType(model, f.type) } : {}),
      ...(elem ? { elem } : {}),
    };
  }
  if (f.ref)
    return {
      field: f.name,
      column: `${snake(f.name)}_id`,
      cls: 'ref',
      nullable: !f.nonNull,
      select: `${f.name} { id }`,
    };
  const cls =
    override ??
    (f.type === 'BigInt' && generic
      ? 'integer'
      : f.type === 'BigInt' && RAW_AMOUNTS[entity]?.includes(f.name)
        ? 'raw'
        : (CLASS[f.type] ?? 'text'));
  return { field: f.name, column: snake(f.name), cls, nullable: !f.nonNull, select: f.name };
}

/**
 * The SQL types a subgraph's `types` may give a field, by its GraphQL type (a list's element: `DOUBLE[]`), and the
 * class each stands for. A BigInt's default is DECIMAL(38,0); DOUBLE holds every uint256 rounded to about 16 digits;
 * BIGINT fails the dataset on a value beyond 64 bits. Every numeric class keeps the exact text in `_text`.
 */
const OVERRIDES: Readonly<Record<string, Readonly<Record<string, ColumnClass>>>> = {
  BigInt: { 'DECIMAL(38,0)': 'integer', DOUBLE: 'raw', BIGINT: 'bigint', VARCHAR: 'text' },
  BigDecimal: { DOUBLE: 'decimal', VARCHAR: 'text' },
  Int8: { BIGINT: 'int8', VARCHAR: 'text' },
  Timestamp: { TIMESTAMPTZ: 'timestamp', BIGINT: 'int8' },
};

/**
 * The class a subgraph's `types` entry gives a field (`"Pool.liquidity": "DOUBLE"`), or a usage error naming the entry,
 * what is wrong and the types its field may take.
 */
export function typeOverride(
  subgraph: { readonly name: string; readonly model: SchemaModel },
  key: string,
  type: string,
): { entity: string; field: string; cls: ColumnClass } {
  const { model } = subgraph;
  const at = `subgraph ${subgraph.name}: types["${key}"]`;
  const [entity = '', field = '', ...more] = key.split('.');
  const e = model.entities.find((x) => x.name === entity) ?? model.aggregations?.find((x) => x.name === entity);
  if (!e || more.length)
    throw new UsageError(`${at}: no entity ${entity || key}; name a field as Entity.field, e.g. Pool.liquidity`);
  const f = e.field.get(field);
  if (!f || f.derivedFrom)
    throw new UsageError(
      `${at}: ${entity} has no stored field ${field}; its fields: ${e.fields
        .filter((x) => !x.derivedFrom)
        .map((x) => x.name)
        .join(', ')}`,
    );
  const choices = f.ref || f.enum || field === 'id' ? undefined : OVERRIDES[f.type];
  if (!choices)
    throw new UsageError(
      `${at}: ${entity}.${field} is ${f.list ? `[${f.type}]` : f.type}, whose type is fixed; types retype BigInt, BigDecimal, Int8 and Timestamp fields`,
    );
  const norm = type.toUpperCase().replace(/\s+/g, '');
  const want = f.list ? norm.replace(/\[\]$/, '') : norm;
  const cls = f.list && !norm.endsWith('[]') ? undefined : choices[want];
  if (!cls)
    throw new UsageError(
      `${at}: "${type}" is not a type of a ${f.list ? `[${f.type}]` : f.type} field; give one of ${Object.keys(choices)
        .map((t) => (f.list ? `${t}[]` : t))
        .join(', ')}`,
    );
  return { entity, field, cls };
}

/** The GraphQL type of the id of an entity (or of an interface's implementers), `ID` when it has none declared. */
function refIdType(model: SchemaModel, type: string): string {
  const e = model.byName.get(type) ?? model.interfaces?.get(type);
  return e?.fields.find((f) => f.name === 'id')?.type ?? 'ID';
}

function kindOf(e: EntityModel): { kind: CursorKind; seq?: string; seqType?: 'BigInt' | 'Int' } {
  if (SNAPSHOTS.has(e.name)) return { kind: 'snapshot' };
  if (EVENTS.has(e.name) && e.field.get('timestamp')) return { kind: 'event', seq: 'timestamp', seqType: 'BigInt' };
  for (const b of ['date', 'hour'])
    if (e.field.get(b)?.type === 'Int') return { kind: 'bucket', seq: b, seqType: 'Int' };
  if (e.field.get('updatedAt')) return { kind: 'mutable', seq: 'updatedAt', seqType: 'BigInt' };
  return { kind: 'snapshot' };
}

/**
 * The warehouse table of an entity: snake case of its plural (`MaintainerEarnings` → `maintainer_earnings`), the
 * plural's ending added after the snake case of the name, so that a run of capitals stays whole (`NewTTL` →
 * `new_ttls`, as graph-node's `newTTLs`).
 */
export function tableOf(entity: string): string {
  const one = lowerCamel(entity);
  const many = pluralize(one);
  let stem = one;
  while (!many.startsWith(stem)) stem = stem.slice(0, -1);
  return `${snake(stem)}${many.slice(stem.length).toLowerCase()}`;
}

/** The table an earlier version named an entity's (snake case of the whole plural: `NewTTL` → `new_tt_ls`). */
export function formerTableOf(entity: string): string {
  return snake(pluralize(lowerCamel(entity)));
}

function subgraphDatasets(schema: string): Dataset[] {
  const model = loadSchemaModel(schema);
  return model.entities.map((e) => {
    const columns = e.fields
      .map((f) => column(f, { model, entity: e.name }))
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

/** Adds a subgraph's datasets to the catalog (at start, before any module walks it). */
export function registerDatasets(datasets: readonly Dataset[]): void {
  for (const d of datasets) {
    if (BY_NAME.has(d.name)) throw new Error(`dataset ${d.name} is registered twice`);
    ALL.push(d);
    BY_NAME.set(d.name, d);
  }
}

/**
 * The kind of a subgraph's entity: an event when immutable with a `timestamp` in seconds, else read by id (an
 * immutable one without its history).
 */
function genericKind(e: EntityModel): Pick<Dataset, 'kind' | 'seq' | 'seqType' | 'immutable'> {
  const t = e.field.get('timestamp');
  if (e.immutable && t && !t.list && (t.type === 'BigInt' || t.type === 'Int'))
    return { kind: 'event', seq: 'timestamp', seqType: t.type };
  return { kind: 'mutable', ...(e.immutable ? { immutable: true } : {}) };
}

/** The datasets of a subgraph of any schema, under a warehouse schema of its name (`uniswap_v2.swaps`). */
export function subgraphDatasetsOf(
  name: string,
  model: SchemaModel,
  types: Readonly<Record<string, string>> = {},
): Dataset[] {
  const overrides = new Map(
    Object.entries(types).map(([k, t]) => {
      const o = typeOverride({ name, model }, k, t);
      return [`${o.entity}.${o.field}`, o.cls] as const;
    }),
  );
  // A field that references an aggregation would be asked per interval: it is left out (the aggregation is a dataset).
  const aggregations = new Set(model.aggregations?.map((a) => a.name));
  const entities = model.entities.map((e): Dataset => {
    const table = `${name}.${tableOf(e.name)}`;
    const former = `${name}.${formerTableOf(e.name)}`;
    return {
      name: table,
      schema: name,
      entity: e.name,
      table,
      ...(former !== table ? { formerly: former } : {}),
      ...genericShape({ model, e, aggregations, overrides }),
      ...genericKind(e),
    };
  });
  return [
    ...entities,
    ...(model.aggregations ?? []).flatMap((a) => aggregationDatasets({ name, model, a, overrides })),
  ];
}

/**
 * The columns of an entity or aggregation of a subgraph of any schema (the fields referencing an aggregation left
 * out), and the GraphQL type of its id where it is not `ID`.
 */
function genericShape(at: {
  model: SchemaModel;
  e: EntityModel;
  aggregations: ReadonlySet<string>;
  overrides: ReadonlyMap<string, ColumnClass>;
}): Pick<Dataset, 'columns' | 'idType'> {
  const { model, e, aggregations, overrides } = at;
  const columns = e.fields
    .filter((f) => !aggregations.has(f.type))
    .map((f) => {
      const override = overrides.get(`${e.name}.${f.name}`);
      return column(f, { model, entity: e.name, generic: true, ...(override ? { override } : {}) });
    })
    .filter((c): c is Column => c !== undefined)
    // Ids are text, but an Int8 id, BIGINT (graph-node's decimal text of a 64-bit integer).
    .map((c) => (c.field === 'id' && c.cls !== 'int8' ? { ...c, cls: 'text' as const } : c));
  const idType = e.field.get('id')?.type;
  return { columns, ...(idType === 'Bytes' || idType === 'String' || idType === 'Int8' ? { idType } : {}) };
}

/**
 * The datasets of an aggregation: one per interval (`uniswap.token_stats_hour`), each read as a mutable entity is (by
 * `_change_block` from the re-read window, the window's rows checked against the upstream), in the only order graph-node
 * gives an aggregation, `(timestamp, id)` descending.
 */
function aggregationDatasets(at: {
  name: string;
  model: SchemaModel;
  a: EntityModel;
  overrides: ReadonlyMap<string, ColumnClass>;
}): Dataset[] {
  const { name, model, a, overrides } = at;
  const shape = genericShape({ model, e: a, aggregations: new Set(), overrides });
  const timestampType = a.field.get('timestamp')?.type ?? 'Timestamp';
  return a.aggregation!.intervals.map((interval) => {
    const table = `${name}.${tableOf(a.name)}_${interval}`;
    const former = `${name}.${formerTableOf(a.name)}_${interval}`;
    return {
      name: table,
      schema: name,
      entity: a.name,
      table,
      ...(former !== table ? { formerly: former } : {}),
      ...shape,
      kind: 'mutable',
      aggregation: { interval, timestampType },
    };
  });
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
