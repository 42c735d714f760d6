/**
 * The default answer budget: how many bytes one upstream answer may take before it is cut off as garbage. It is
 * derived from the catalog: the largest page any dataset can ask for, with every value at a generous size.
 *
 * - A String, ID or Bytes value: 1 KiB (ERC-20 does not bound token names, real ones are under 100 characters; the
 *   longest ids, two addresses and a number, are about 140).
 * - A reference `{"id": …}`: 170 bytes; a nested list: graph-node's default of 100 items (`first` unset); the
 *   positions of a liquidity-list item: 10 (they are the asking user's, and the exporter names no user).
 * - A BigInt: 82 bytes (uint256 has 78 digits); a BigDecimal: 100 (34 significant digits, printed without an exponent).
 * - A page: 1000 rows of a subgraph entity (graph-node's most), 100 items of the liquidity list.
 *
 * The largest such page is the liquidity list's (32.5 MiB: 100 items of 94 fields and their positions); of the
 * subgraph entities, Transaction's (22.4 MiB, with its list of tokens). The budget is that, rounded up to a multiple of
 * 16 MiB: 48 MiB. Real pages are far smaller (see docs/running.md, "Hostile data"), so the budget is reached only by an
 * answer that is broken or hostile, and four requests in flight hold at most 192 MiB of answer.
 */

import { maxOf } from '../util/extremes.ts';
import type { Column, ColumnClass, Dataset, StructType } from './catalog.ts';
import { NESTED_FIRST } from './column.ts';
import { LIST_PAGE_SIZE } from './liquidity-list.ts';

/** Bytes one scalar value takes in a JSON answer, at most, generously. */
const VALUE_BYTES: Readonly<Record<Exclude<ColumnClass, 'list' | 'structs'>, number>> = {
  text: 1024,
  ref: 170,
  int: 11,
  bool: 5,
  int8: 22,
  timestamp: 22,
  bigint: 22,
  raw: 82,
  integer: 82,
  decimal: 100,
};
/** Items of a nested list of references a page asks for per row (`column.ts`). */
const NESTED_LIST_ITEMS = NESTED_FIRST;
/**
 * Positions of one list item: they are the asking user's positions in the pool (`LiquidityLp`), and the exporter never
 * names a user; a user holds one or two LP tokens of a pool, or a few concentrated-liquidity positions.
 */
const POSITIONS_PER_ITEM = 10;
/** Rows of a subgraph page at most (graph-node's `first` limit). */
const SUBGRAPH_PAGE_ROWS = 1000;
/** Room for the envelope of an answer (`{"data": …}`, `_meta`, list paging fields). */
const ENVELOPE_BYTES = 4096;

/** A key and its punctuation: `"name":` and a comma. */
const keyBytes = (name: string) => name.length + 4;

function structBytes(shape: StructType): number {
  let n = 2;
  for (const [k, t] of Object.entries(shape))
    n += keyBytes(k) + (t === 'text' ? VALUE_BYTES.text : t === 'bool' ? VALUE_BYTES.bool : structBytes(t));
  return n;
}

function columnBytes(c: Column): number {
  const name = c.select.split('.').pop()!.split(/[ (]/)[0]!;
  if (c.cls === 'structs') return keyBytes(name) + POSITIONS_PER_ITEM * (structBytes(c.struct!) + 1);
  if (c.cls === 'list') return keyBytes(name) + NESTED_LIST_ITEMS * (VALUE_BYTES.ref + 1);
  return keyBytes(name) + VALUE_BYTES[c.cls];
}

/** The largest page a dataset can produce, in bytes, at the generous value sizes above. */
export function largestPageBytes(ds: Dataset): number {
  const row = 2 + ds.columns.reduce((n, c) => n + columnBytes(c), 0);
  return ENVELOPE_BYTES + row * (ds.kind === 'list' ? LIST_PAGE_SIZE : SUBGRAPH_PAGE_ROWS);
}

/** The default budget for the given datasets: their largest page, rounded up to a multiple of 16 MiB. */
export function defaultAnswerBudget(datasets: readonly Dataset[]): number {
  const step = 16 * 1024 ** 2;
  return Math.ceil(maxOf(datasets.map(largestPageBytes)) / step) * step;
}
