/**
 * The datasets of a subgraph of any schema: one per entity and one per interval of each aggregation, under a warehouse
 * schema of the subgraph's name, their tables and columns named by the subgraph's names (`names.ts`), their columns
 * typed by the GraphQL type of each field or by the subgraph's `types`.
 */
import { UsageError } from '../errors.ts';
import type { EntityModel, SchemaModel } from '../schemas/entity-model.ts';
import type { CursorKind, Dataset } from './catalog.ts';
import { type Column, type ColumnClass, fieldColumn, type TimeUnit, textColumn } from './column.ts';
import { decideNames, type EntityNames, formerTables, type SubgraphNames } from './names.ts';

/** What a `types` entry makes a field's column: its class, and for a time of an `Int` or `BigInt`, its unit. */
export interface Override {
  readonly cls: ColumnClass;
  readonly unit?: TimeUnit;
}

/**
 * The times an `Int` or `BigInt` of seconds (or of milliseconds) may be made: TIMESTAMP WITH TIME ZONE, exactly (a
 * second is a whole number of microseconds).
 */
const TIMES: Readonly<Record<string, Override>> = {
  TIMESTAMPTZ: { cls: 'timestamp', unit: 's' },
  'TIMESTAMPTZ(S)': { cls: 'timestamp', unit: 's' },
  'TIMESTAMPTZ(MS)': { cls: 'timestamp', unit: 'ms' },
};

/**
 * The SQL types a subgraph's `types` may give a field, by its GraphQL type (a list's element: `DOUBLE[]`), and the
 * class each stands for. A BigInt's default is DECIMAL(38,0); DOUBLE holds every uint256 rounded to about 16 digits;
 * BIGINT fails the dataset on a value beyond 64 bits. Every numeric class keeps the exact text.
 */
const OVERRIDES: Readonly<Record<string, Readonly<Record<string, Override>>>> = {
  BigInt: {
    'DECIMAL(38,0)': { cls: 'integer' },
    DOUBLE: { cls: 'raw' },
    BIGINT: { cls: 'bigint' },
    VARCHAR: { cls: 'text' },
    ...TIMES,
  },
  Int: { INTEGER: { cls: 'int' }, ...TIMES },
  BigDecimal: { DOUBLE: { cls: 'decimal' }, VARCHAR: { cls: 'text' } },
  Int8: { BIGINT: { cls: 'int8' }, VARCHAR: { cls: 'text' } },
  Timestamp: { TIMESTAMPTZ: { cls: 'timestamp' }, BIGINT: { cls: 'int8' } },
};

/**
 * The class a subgraph's `types` entry gives a field (`"Pool.liquidity": "DOUBLE"`), or a usage error naming the entry,
 * what is wrong and the types its field may take.
 */
export function typeOverride(
  subgraph: { readonly name: string; readonly model: SchemaModel },
  key: string,
  type: string,
): { entity: string; field: string } & Override {
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
  const all = f.ref || f.enum || field === 'id' ? undefined : OVERRIDES[f.type];
  // A list's elements take no time (a list of seconds stays a list of numbers).
  const choices = all && Object.fromEntries(Object.entries(all).filter(([, o]) => !(f.list && o.unit)));
  if (!choices || !Object.keys(choices).length)
    throw new UsageError(
      `${at}: ${entity}.${field} is ${f.list ? `[${f.type}]` : f.type}, whose type is fixed; types retype BigInt, BigDecimal, Int, Int8 and Timestamp fields`,
    );
  const norm = type.toUpperCase().replace(/\s+/g, '');
  const want = f.list ? norm.replace(/\[\]$/, '') : norm;
  const o = f.list && !norm.endsWith('[]') ? undefined : choices[want];
  if (!o)
    throw new UsageError(
      `${at}: "${type}" is not a type of a ${f.list ? `[${f.type}]` : f.type} field; give one of ${Object.keys(choices)
        .map((t) => (f.list ? `${t}[]` : t))
        .join(', ')}`,
    );
  // An event pages its rows by its `timestamp` in seconds: that one stays a number (the lake's `time` is its time).
  if (o.unit && field === 'timestamp' && e.immutable && !e.aggregation)
    throw new UsageError(
      `${at}: ${entity}.timestamp orders ${entity}'s rows as they are read, so it stays a number; the lake's views hold it as a time in the column time`,
    );
  return { entity, field, ...o };
}

/**
 * The kind of a subgraph's entity: an event when immutable with a `timestamp` in seconds, else read by id (an
 * immutable one without its history).
 */
function genericKind(e: EntityModel): { kind: CursorKind; seq?: string; seqType?: 'BigInt' | 'Int'; immutable?: true } {
  const t = e.field.get('timestamp');
  if (e.immutable && t && !t.list && (t.type === 'BigInt' || t.type === 'Int'))
    return { kind: 'event', seq: 'timestamp', seqType: t.type };
  return { kind: 'mutable', ...(e.immutable ? { immutable: true } : {}) };
}

/** What every dataset of one subgraph is made with. */
interface Making {
  readonly name: string;
  readonly model: SchemaModel;
  readonly names: SubgraphNames;
  readonly overrides: ReadonlyMap<string, Override>;
  /** Every table of the subgraph by this rule: an earlier name equal to one of them is no earlier name of another. */
  readonly live: ReadonlySet<string>;
}

/**
 * The datasets of a subgraph of any schema, under a warehouse schema of its name (`uniswap_v2.swaps`), named by `names`
 * (decided when the subgraph was added or refreshed; by the rule from the schema alone where none are given).
 */
export function subgraphDatasetsOf(
  name: string,
  model: SchemaModel,
  opts: { readonly types?: Readonly<Record<string, string>>; readonly names?: SubgraphNames } = {},
): Dataset[] {
  const overrides = new Map(
    Object.entries(opts.types ?? {}).map(([k, t]) => {
      const { entity, field, ...o } = typeOverride({ name, model }, k, t);
      return [`${entity}.${field}`, o] as const;
    }),
  );
  const names = decideNames(model, opts.names).names;
  const live = new Set(
    [...model.entities, ...(model.aggregations ?? [])].flatMap((e) =>
      (e.aggregation?.intervals ?? ['']).map((i) => `${names[e.name]!.table}${i ? `_${i}` : ''}`),
    ),
  );
  const at: Making = { name, model, names, overrides, live };
  // A field that references an aggregation would be asked per interval: it is left out (the aggregation is a dataset).
  const aggregations = new Set(model.aggregations?.map((a) => a.name));
  const entities = model.entities.map(
    (e): Dataset => ({
      ...tableNamed(at, e, ''),
      ...genericShape(at, e, aggregations),
      ...genericKind(e),
    }),
  );
  return [...entities, ...(model.aggregations ?? []).flatMap((a) => aggregationDatasets(at, a))];
}

/** A dataset's name and table (`suffix`: an aggregation's `_<interval>`), and the earlier names its table had. */
function tableNamed(
  at: Making,
  e: EntityModel,
  suffix: string,
): Pick<Dataset, 'name' | 'schema' | 'entity' | 'table' | 'formerly'> {
  const own = `${at.names[e.name]!.table}${suffix}`;
  const table = `${at.name}.${own}`;
  const formerly = formerTables(e.name)
    .map((t) => `${t}${suffix}`)
    .filter((t) => !at.live.has(t))
    .map((t) => `${at.name}.${t}`);
  return { name: table, schema: at.name, entity: e.name, table, ...(formerly.length ? { formerly } : {}) };
}

/**
 * A column as the subgraph's names name it, with the names an earlier version gave it where they differ: those of
 * `fieldColumn`, DODO's rule, by which earlier versions named a subgraph's columns too.
 */
function named(c: Column, own: EntityNames): Column {
  const column = own.columns[c.field]!;
  const text = own.texts[c.field] ?? `${column}_text`;
  const formerly = { column: c.column, text: textColumn(c) };
  const moved = formerly.column !== column || formerly.text !== text;
  return { ...c, column, ...(text !== `${column}_text` ? { text } : {}), ...(moved ? { formerly } : {}) };
}

/**
 * The columns of an entity or aggregation of a subgraph of any schema (the fields referencing an aggregation left
 * out), and the GraphQL type of its id where it is not `ID`.
 */
function genericShape(
  at: Making,
  e: EntityModel,
  aggregations: ReadonlySet<string>,
): Pick<Dataset, 'columns' | 'idType'> {
  const columns = e.fields
    .filter((f) => !aggregations.has(f.type))
    .map((f) => {
      const o = at.overrides.get(`${e.name}.${f.name}`);
      return fieldColumn(f, {
        model: at.model,
        entity: e.name,
        generic: true,
        ...(o ? { override: o.cls, ...(o.unit ? { unit: o.unit } : {}) } : {}),
      });
    })
    .filter((c): c is Column => c !== undefined)
    .map((c) => named(c, at.names[e.name]!))
    // Ids are text, but an Int8 id, BIGINT (graph-node's decimal text of a 64-bit integer).
    .map((c) => (c.field === 'id' && c.cls !== 'int8' ? { ...c, cls: 'text' as const } : c));
  const idType = e.field.get('id')?.type;
  return { columns, ...(idType === 'Bytes' || idType === 'String' || idType === 'Int8' ? { idType } : {}) };
}

/**
 * The datasets of an aggregation: one per interval (`uniswap.token_stats_hour`), each read as a mutable entity is (by
 * `_change_block` from the re-read window, the window's rows checked against the upstream), in the only order
 * graph-node gives an aggregation, `(timestamp, id)` descending.
 */
function aggregationDatasets(at: Making, a: EntityModel): Dataset[] {
  const shape = genericShape(at, a, new Set());
  const timestampType = a.field.get('timestamp')?.type ?? 'Timestamp';
  return a.aggregation!.intervals.map((interval) => ({
    ...tableNamed(at, a, `_${interval}`),
    ...shape,
    kind: 'mutable',
    aggregation: { interval, timestampType },
  }));
}
