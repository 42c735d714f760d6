/** Turns a page of upstream JSON into flat rows for the warehouse, checking every value's type. Pure and synchronous. */

import type { Column, Dataset, StructType } from '../catalog/catalog.ts';
import { isRefList, MICROS, type TimeUnit } from '../catalog/column.ts';
import { chainName } from '../config/chains.ts';
import { GarbageError } from '../errors.ts';
import { SUBGRAPH_SCHEMAS } from '../schemas/entity-model.ts';

/** Largest 64-bit integer: a BigInt count, time or block beyond it is garbage (no real one comes close). */
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
/** Digits of INT64_MAX (9223372036854775807): shorter texts always fit. */
const INT64_DIGITS = 19;
/** Integer digits below which any value fits a DOUBLE (whose largest is about 1.8e308). */
const DOUBLE_DIGITS = 308;

/**
 * What to do about a value of the wrong type: check DODO's schemas (its liquidity list and its three subgraphs), or
 * take a subgraph's schema again (its datasets' schema is its name). Read off the dataset alone: the page worker, a
 * thread of its own, holds datasets and no registry of subgraphs.
 */
function schemaHint(ds: Dataset): string {
  const dodo = ds.schema === 'list' || (SUBGRAPH_SCHEMAS as readonly string[]).includes(ds.schema);
  return dodo
    ? 'The upstream schema may have changed: run `pool-export schema check`'
    : `The subgraph's schema may have changed: run \`pool-export subgraph refresh ${ds.schema}\``;
}
/** What to do about a number out of range. */
const RANGE_HINT =
  'No real value comes near it, so the task stops here, storing nothing of this page, until the upstream corrects it';

/** Where a value sits: a column of a dataset on a chain. */
interface Cell {
  readonly ds: Dataset;
  readonly chainId: number;
  readonly c: Column;
}

/** A GarbageError for a field of a dataset on a chain; `hint` says what to do (by default: check the schema). */
export function garbage(
  at: { ds: Dataset; chainId: number; field: string },
  detail: string,
  hint = schemaHint(at.ds),
): GarbageError {
  const { ds, chainId, field } = at;
  return new GarbageError({ dataset: ds.name, chainId, chain: chainName(chainId), field }, detail, hint);
}

/** A GarbageError for a cell's value. */
const garbageAt = (cell: Cell, detail: string, hint?: string) =>
  garbage({ ...cell, field: fieldName(cell.ds, cell.c) }, detail, hint);

/** Mapped rows: every numeric value fits its column, so none is stored as NULL. */
export interface MappedPage {
  readonly rows: Record<string, unknown>[];
}

const BIGINT_RE = /^-?\d+$/;
const DECIMAL_RE = /^-?(\d+)(?:\.(\d+))?$/;

/** A column's compiled reading: where its value sits in an upstream row (references: the object, whose `id` is checked). */
interface ColumnPlan {
  readonly c: Column;
  readonly keys: readonly string[];
}

const plans = new WeakMap<Dataset, readonly ColumnPlan[]>();

/** The columns of a dataset with their value paths, computed once. */
function planOf(ds: Dataset): readonly ColumnPlan[] {
  let p = plans.get(ds);
  if (!p) {
    const list = ds.kind === 'list';
    p = ds.columns.map((c) => {
      const path = list ? c.select : c.field;
      return { c, keys: (c.cls === 'ref' ? path.replace(/\.id$/, '') : path).split('.') };
    });
    plans.set(ds, p);
  }
  return p;
}

/** A value under a null object on its path: null, when that object may be null. */
const UNDER_NULL = Symbol('under a null object');

function valueAt(obj: object, keys: readonly string[], parents: readonly boolean[] | undefined): unknown {
  let v: unknown = obj;
  for (let i = 0; i < keys.length; i++) {
    if (v === null) return parents?.[i - 1] ? UNDER_NULL : null;
    if (typeof v !== 'object' || v === undefined || !(keys[i]! in (v as object))) return undefined;
    v = (v as Record<string, unknown>)[keys[i]!];
  }
  return v;
}

/** Whether a BigInt text fits a 64-bit integer. */
function fitsInt64(v: string): boolean {
  if (v.length - (v.startsWith('-') ? 1 : 0) < INT64_DIGITS) return true;
  const b = BigInt(v);
  return b <= INT64_MAX && b >= INT64_MIN;
}

/** Whether a number text with `intDigits` integer digits is within DOUBLE's range (it is then rounded to about 16 digits). */
function fitsDouble(v: string, intDigits: number): boolean {
  return intDigits < DOUBLE_DIGITS || Number.isFinite(Number(v));
}

/** The name of a column's field in errors: its path in a list item, its field name in an entity. */
const fieldName = (ds: Dataset, c: Column) => (ds.kind === 'list' ? c.select : c.field);

/** A value for an error message: its JSON, cut to 80 characters with its length said. */
function shown(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length <= 80 ? text : `${text.slice(0, 80)}… (${text.length.toLocaleString('en-US')} characters)`;
}

/** A value of the wrong type. */
function bad(cell: Cell, v: unknown, what: string): GarbageError {
  return garbageAt(cell, `expected ${what}, got ${shown(v)}`);
}

/** A number of the right type, out of its column's range. */
function outOfRange(cell: Cell, v: unknown, what: string): GarbageError {
  return garbageAt(cell, `expected ${what}, got ${shown(v)}`, RANGE_HINT);
}

/**
 * One element of a `list` column (`v`): a reference's id (`{ id }` lists), a scalar checked as its element's class
 * would be (`[Int!]`: an integer; `[BigDecimal]`: a decimal string), a string (other lists), or null.
 */
function listItem(cell: Cell, v: unknown, x: unknown): unknown {
  if (x === null) return null;
  if (isRefList(cell.c)) {
    const id = typeof x === 'object' && !Array.isArray(x) ? (x as { id?: unknown }).id : undefined;
    if (typeof id === 'string') return id;
    throw bad(cell, v, 'a list of entity references { id }');
  }
  if (cell.c.elem) return check({ ...cell, c: { ...cell.c, cls: cell.c.elem, nullable: true } }, x);
  if (typeof x === 'string') return x;
  throw bad(cell, v, 'a list of strings');
}

/** One element of a `structs` column, checked against its shape and reduced to its declared fields, in their order. */
function structItem(
  cell: Cell,
  x: unknown,
  at: { readonly shape: StructType; readonly path: string },
): Record<string, unknown> | null {
  if (x === null) return null;
  if (typeof x !== 'object' || Array.isArray(x)) throw bad(cell, x, `an object at ${at.path}`);
  const out: Record<string, unknown> = {};
  for (const [k, t] of Object.entries(at.shape)) {
    const v = (x as Record<string, unknown>)[k];
    const path = `${at.path}.${k}`;
    if (v === undefined) throw garbageAt(cell, `${path} is missing from the answer`);
    if (t === 'text' && v !== null && typeof v !== 'string') throw bad(cell, v, `a string at ${path}`);
    if (t === 'bool' && v !== null && typeof v !== 'boolean') throw bad(cell, v, `a boolean at ${path}`);
    out[k] = typeof t === 'object' ? structItem(cell, v, { shape: t, path }) : v;
  }
  return out;
}

/**
 * The checked value of an `Int` or `BigInt` of seconds (or milliseconds) stored as a time: its decimal text, within the
 * range of TIMESTAMP WITH TIME ZONE's microseconds (64 bits), so that it converts exactly.
 */
function timeIn(cell: Cell, v: unknown, unit: TimeUnit): string {
  const text = typeof v === 'number' && Number.isInteger(v) ? String(v) : v;
  if (typeof text !== 'string' || !BIGINT_RE.test(text))
    throw bad(cell, v, 'a whole number of seconds or milliseconds');
  if (!fitsInt64((BigInt(text) * BigInt(MICROS[unit])).toString()))
    throw outOfRange(cell, v, `a time in ${unit === 's' ? 'seconds' : 'milliseconds'} within 64 bits of microseconds`);
  return text;
}

/** The checked value of a column. */
function check(cell: Cell, v: unknown): unknown {
  const c = cell.c;
  if (v === undefined) throw garbageAt(cell, 'the field is missing from the answer');
  if (v === null) {
    if (!c.nullable) throw bad(cell, v, 'a value (the schema says non-null)');
    return null;
  }
  switch (c.cls) {
    case 'text':
      if (typeof v !== 'string') throw bad(cell, v, 'a string');
      return v;
    case 'ref': {
      const id = typeof v === 'object' ? (v as { id?: unknown }).id : undefined;
      if (typeof id !== 'string') throw bad(cell, v, 'an entity reference { id }');
      return id;
    }
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v)) throw bad(cell, v, 'an integer');
      return v;
    case 'bool':
      if (typeof v !== 'boolean') throw bad(cell, v, 'a boolean');
      return v;
    case 'timestamp':
      if (c.unit) return timeIn(cell, v, c.unit);
      if (typeof v !== 'string' || !BIGINT_RE.test(v)) throw bad(cell, v, 'a BigInt as a decimal string');
      if (!fitsInt64(v)) throw outOfRange(cell, v, 'a count, time or block number within 64 bits');
      return v;
    case 'int8':
    case 'bigint':
      if (typeof v !== 'string' || !BIGINT_RE.test(v)) throw bad(cell, v, 'a BigInt as a decimal string');
      if (!fitsInt64(v)) throw outOfRange(cell, v, 'a count, time or block number within 64 bits');
      return v;
    case 'integer':
      // Any length: DECIMAL(38,0) holds it where it fits, its text always.
      if (typeof v !== 'string' || !BIGINT_RE.test(v)) throw bad(cell, v, 'a BigInt as a decimal string');
      return v;
    case 'raw':
      if (typeof v !== 'string' || !BIGINT_RE.test(v)) throw bad(cell, v, 'a BigInt as a decimal string');
      if (!fitsDouble(v, v.length)) throw outOfRange(cell, v, 'an amount within DOUBLE range (below 1.8e308)');
      return v;
    case 'decimal': {
      const m = typeof v === 'string' ? DECIMAL_RE.exec(v) : null;
      if (!m) throw bad(cell, v, 'a BigDecimal as a decimal string');
      if (!fitsDouble(v as string, m[1]!.length))
        throw outOfRange(cell, v, 'a BigDecimal within DOUBLE range (below 1.8e308)');
      return v;
    }
    case 'list':
      if (!Array.isArray(v)) throw bad(cell, v, 'a list');
      return v.map((x) => listItem(cell, v, x));
    case 'structs':
      if (!Array.isArray(v)) throw bad(cell, v, 'a list of objects');
      return v.map((x, i) => structItem(cell, x, { shape: c.struct!, path: `${c.field}[${i}]` }));
  }
}

/**
 * Checks every value of every row of a page, and hands each checked value to `put` (row index, column index, value)
 * when given.
 */
function eachValue(
  at: { readonly ds: Dataset; readonly chainId: number },
  items: readonly unknown[],
  put?: (row: number, column: number, value: unknown) => void,
): void {
  const { ds, chainId } = at;
  const plan = planOf(ds);
  const cells: Cell[] = plan.map(({ c }) => ({ ds, chainId, c }));
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw garbage({ ds, chainId, field: 'row' }, `expected an object, got ${shown(item)}`);
    for (let k = 0; k < plan.length; k++) {
      const raw = valueAt(item, plan[k]!.keys, plan[k]!.c.parents);
      const v = raw === UNDER_NULL ? null : check(cells[k]!, raw);
      put?.(i, k, v);
    }
  }
}

/** Maps one page of rows (subgraph entities or liquidity-list items). */
export function mapPage(ds: Dataset, chainId: number, items: unknown[]): MappedPage {
  const plan = planOf(ds);
  const rows: Record<string, unknown>[] = Array.from({ length: items.length }, () => ({}));
  eachValue({ ds, chainId }, items, (i, k, v) => {
    rows[i]![plan[k]!.c.column] = v;
  });
  return { rows };
}

/**
 * Checks one page of rows as `mapPage` does, building nothing: the page is then stored as the upstream sent it, and
 * DuckDB maps it (see `store/ddl.ts`, `insertParts`), reading exactly the values checked here.
 */
export function checkPage(ds: Dataset, chainId: number, items: readonly unknown[]): void {
  eachValue({ ds, chainId }, items);
}
