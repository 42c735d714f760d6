/** A stored column of a dataset: its upstream field, its warehouse name and its storage class. */

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
}

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
