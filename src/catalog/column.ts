/** A stored column of a dataset: its upstream field, its warehouse name and its storage class. */
import type { FieldModel, SchemaModel } from '../schemas/entity-model.ts';
import { refColumn, snake } from './names.ts';

/**
 * Storage class of a column: decides its SQL type, JSON check and conversion.
 * - `bigint`: a BigInt that counts, or is a time or a block: BIGINT (every real value fits 64 bits);
 * - `raw`: a BigInt holding a raw token amount or an 18-decimal fixed-point parameter (up to 2^256): DOUBLE;
 * - `integer`: a BigInt of a subgraph of any schema: DECIMAL(38,0), exact; NULL where the value has more than 38 digits
 *   (a uint256 beyond 10^38), whose exact text is in `<column>_text` as always;
 * - `decimal`: a BigDecimal: DOUBLE;
 * - `timestamp`: a subgraph's `Timestamp` (microseconds since the epoch, as graph-node sends it): TIMESTAMPTZ, which
 *   holds microseconds exactly;
 * - `structs`: a list of objects of a declared shape (the liquidity list's positions), a LIST of STRUCTs.
 * Numeric columns also keep the exact upstream text in `<column>_text`.
 */
export type ColumnClass =
  | 'text'
  | 'int'
  | 'int8'
  | 'timestamp'
  | 'bool'
  | 'bigint'
  | 'raw'
  | 'integer'
  | 'decimal'
  | 'ref'
  | 'list'
  | 'structs';

/** The shape of one element of a `structs` column: text and boolean fields, and nested objects. */
export interface StructType {
  readonly [field: string]: 'text' | 'bool' | StructType;
}

/** One stored column. Numeric upstream values (`bigint`, `decimal`) also keep their exact text in `<column>_text`. */
export interface Column {
  /** Upstream field name. */
  readonly field: string;
  /** Column name in the warehouse (snake case; references end in `_id`). */
  readonly column: string;
  readonly cls: ColumnClass;
  readonly nullable: boolean;
  /** The GraphQL selection that fetches it; for the liquidity list, the dotted path of the field in a list item. */
  readonly select: string;
  /**
   * The class of each element of a `list` column of scalars (`[Int!]` → `int`, `[BigDecimal]` → `decimal`): its SQL
   * list type and its check follow the element's. Absent for lists of references and of text.
   */
  readonly elem?: ListElement;
  /**
   * For a list of references: the GraphQL type of the referenced entity's id (`ID`, `Bytes`, `String`, `Int8`), the
   * type of the cursor that reads the rest of a list longer than one answer gives (`export/long-lists.ts`).
   */
  readonly refIdType?: string;
  /** The element shape of a `structs` column. */
  readonly struct?: StructType;
  /** For a nested list field: whether each object on its path may be null (then so is the value), outermost first. */
  readonly parents?: readonly boolean[];
  /**
   * For a `timestamp` made of an `Int` or `BigInt` by a subgraph's `types`: the unit the upstream counts in (seconds or
   * milliseconds); without it, graph-node's `Timestamp`, in microseconds.
   */
  readonly unit?: TimeUnit;
  /** The column of its exact text, where it keeps one (`hasText`) and that is not `<column>_text` (`names.ts`). */
  readonly text?: string;
  /**
   * The names an earlier version gave its column and its exact text, where they differ (a subgraph's, before
   * `names.ts`): a table that has them is renamed by the next run (`store/warehouse.ts`).
   */
  readonly formerly?: { readonly column: string; readonly text: string };
}

/** The column of a column's exact upstream text (numbers, and lists of them): `<column>_text`, unless named otherwise. */
export const textColumn = (c: Column): string => c.text ?? `${c.column}_text`;

/** The unit of a time an upstream `Int` or `BigInt` counts: seconds or milliseconds since the Unix epoch. */
export type TimeUnit = 's' | 'ms';

/** Microseconds in one unit of a time column (graph-node's `Timestamp`: one). */
export const MICROS: Readonly<Record<TimeUnit | 'us', number>> = { s: 1_000_000, ms: 1000, us: 1 };

/** The classes a list of scalars may hold beside text. */
export type ListElement = 'int' | 'int8' | 'bool' | 'bigint' | 'raw' | 'integer' | 'decimal';

/**
 * Items of a list of references a page asks for per row: one more than graph-node's default `first` (100), so that a
 * list of 100 is known whole; a longer one is read on by `export/long-lists.ts`. graph-node answers a stored list of
 * references as a nested collection (`relational_queries.rs`, `children_type_c`: `c.id = any(p.child_ids)`, ordered
 * by the sort key, `limit first offset skip`): in order of the referenced rows' ids, each row once, only rows that
 * exist at the block. The order in which the mapping stored the list, and an id stored twice, cannot be read.
 */
export const NESTED_FIRST = 101;

/** The selection of a list of references: its first `NESTED_FIRST` items by id. */
export const refListSelect = (field: string): string =>
  `${field}(first: ${NESTED_FIRST}, orderBy: id, orderDirection: asc) { id }`;

/** Whether a `list` column holds entity references (`tokens { id }`) rather than strings. */
export const isRefList = (c: Column): boolean => c.select.includes('{');

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
 * The column of a field, named by DODO's rule (a subgraph's are renamed by its names, `subgraph-datasets.ts`). In a subgraph of any schema (`generic`), a BigInt may be a raw amount up to 2^256: DECIMAL(38,0)
 * (exact, NULL beyond 38 digits), with its exact text beside it, unless the subgraph's `types` says otherwise
 * (`override`: the class its SQL type names, `typeOverride`).
 */
export function fieldColumn(
  f: FieldModel,
  at: { model: SchemaModel; entity: string; generic?: boolean; override?: ColumnClass; unit?: TimeUnit },
): Column | undefined {
  const { model, entity, generic = false, override, unit } = at;
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
      column: refColumn(f.name),
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
  return { field: f.name, column: snake(f.name), cls, nullable: !f.nonNull, select: f.name, ...(unit ? { unit } : {}) };
}

/** The GraphQL type of the id of an entity (or of an interface's implementers), `ID` when it has none declared. */
function refIdType(model: SchemaModel, type: string): string {
  const e = model.byName.get(type) ?? model.interfaces?.get(type);
  return e?.fields.find((f) => f.name === 'id')?.type ?? 'ID';
}
