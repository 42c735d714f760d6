/** A stored column of a dataset: its upstream field, its warehouse name and its storage class. */

/**
 * Storage class of a column: decides its SQL type, JSON check and conversion.
 * - `bigint`: a BigInt that counts, or is a time or a block: BIGINT (every real value fits 64 bits);
 * - `raw`: a BigInt holding a raw token amount or an 18-decimal fixed-point parameter (up to 2^256): DOUBLE;
 * - `decimal`: a BigDecimal: DOUBLE;
 * - `structs`: a list of objects of a declared shape (the liquidity list's positions), a LIST of STRUCTs.
 * Numeric columns also keep the exact upstream text in `<column>_text`.
 */
export type ColumnClass = 'text' | 'int' | 'int8' | 'bool' | 'bigint' | 'raw' | 'decimal' | 'ref' | 'list' | 'structs';

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
  /** The element shape of a `structs` column. */
  readonly struct?: StructType;
  /** For a nested list field: whether each object on its path may be null (then so is the value), outermost first. */
  readonly parents?: readonly boolean[];
}

/** Whether a `list` column holds entity references (`tokens { id }`) rather than strings. */
export const isRefList = (c: Column): boolean => c.select.includes('{');
