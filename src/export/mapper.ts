/** Turns a page of upstream JSON into flat rows for the warehouse, checking every value's type. Pure and synchronous. */
import { chainName } from '../config/chains.ts';
import type { Column, Dataset, StructType } from '../catalog/catalog.ts';

/** Decimal digits DECIMAL(38,18) holds before and after the point. */
const DEC_INT_DIGITS = 20;
const DEC_FRAC_DIGITS = 18;
/** HUGEINT's range. */
const HUGEINT_MAX = 2n ** 127n - 1n;
const HUGEINT_MIN = -(2n ** 127n);

/** A value that does not fit a dataset's declared type: stops the task with the dataset, chain and field named. */
export class GarbageError extends Error {
  constructor(readonly dataset: string, readonly chainId: number, readonly field: string, detail: string) {
    super(`upstream sent invalid data for ${dataset} on ${chainName(chainId)} (chain ${chainId}), field "${field}": ${detail}. The upstream schema may have changed: run \`pool-export schema check\``);
    this.name = 'GarbageError';
  }
}

/** Mapped rows and the values that the numeric columns cannot hold exactly (kept as text, counted). */
export interface MappedPage {
  readonly rows: Record<string, unknown>[];
  /** Values per column beyond DECIMAL(38,18) / HUGEINT range: the numeric column is NULL, `_text` is exact. */
  readonly outOfRange: Record<string, number>;
  /** Values per column with more than 18 fractional digits: the numeric column is cut to 18, `_text` is exact. */
  readonly truncated: Record<string, number>;
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

/** Digits of HUGEINT's largest value (170141183460469231731687303715884105727): shorter texts always fit. */
const HUGEINT_DIGITS = 39;

/** How a numeric text fits its column: exactly, cut to 18 fractional digits, or not at all. */
function fit(c: Column, v: string, m: RegExpExecArray | null): 'exact' | 'truncated' | 'out' {
  if (c.cls === 'bigint') {
    if (v.length - (v.startsWith('-') ? 1 : 0) < HUGEINT_DIGITS) return 'exact';
    const b = BigInt(v);
    return b <= HUGEINT_MAX && b >= HUGEINT_MIN ? 'exact' : 'out';
  }
  if (m![1]!.length > DEC_INT_DIGITS && m![1]!.replace(/^0+/, '').length > DEC_INT_DIGITS) return 'out';
  return (m![2] ?? '').length > DEC_FRAC_DIGITS ? 'truncated' : 'exact';
}

/** The name of a column's field in errors: its path in a list item, its field name in an entity. */
const fieldName = (ds: Dataset, c: Column) => (ds.kind === 'list' ? c.select : c.field);

function bad(ds: Dataset, chainId: number, c: Column, v: unknown, what: string): GarbageError {
  return new GarbageError(ds.name, chainId, fieldName(ds, c), `expected ${what}, got ${JSON.stringify(v)?.slice(0, 80)}`);
}

function listItem(ds: Dataset, chainId: number, c: Column, v: unknown, x: unknown): string | null {
  if (typeof x === 'object' && x !== null && 'id' in x) return String((x as { id: unknown }).id);
  if (typeof x === 'string' || x === null) return x;
  throw bad(ds, chainId, c, v, 'a list of strings');
}

/** One element of a `structs` column, checked against its shape and reduced to its declared fields, in their order. */
function structItem(ds: Dataset, chainId: number, c: Column, shape: StructType, x: unknown, path: string): Record<string, unknown> | null {
  if (x === null) return null;
  if (typeof x !== 'object' || Array.isArray(x)) throw bad(ds, chainId, c, x, `an object at ${path}`);
  const out: Record<string, unknown> = {};
  for (const [k, t] of Object.entries(shape)) {
    const v = (x as Record<string, unknown>)[k];
    const at = `${path}.${k}`;
    if (v === undefined) throw new GarbageError(ds.name, chainId, fieldName(ds, c), `${at} is missing from the answer`);
    if (t === 'text' && v !== null && typeof v !== 'string') throw bad(ds, chainId, c, v, `a string at ${at}`);
    if (t === 'bool' && v !== null && typeof v !== 'boolean') throw bad(ds, chainId, c, v, `a boolean at ${at}`);
    out[k] = typeof t === 'object' ? structItem(ds, chainId, c, t, v, at) : v;
  }
  return out;
}

/** The checked value of a column; `out.m` receives the parse of a BigDecimal, for `fit`. */
function check(ds: Dataset, chainId: number, c: Column, v: unknown, out: { m: RegExpExecArray | null }): unknown {
  if (v === undefined) throw new GarbageError(ds.name, chainId, fieldName(ds, c), 'the field is missing from the answer');
  if (v === null) {
    if (!c.nullable) throw bad(ds, chainId, c, v, 'a value (the schema says non-null)');
    return null;
  }
  switch (c.cls) {
    case 'text':
      if (typeof v !== 'string') throw bad(ds, chainId, c, v, 'a string');
      return v;
    case 'ref': {
      const id = typeof v === 'object' ? (v as { id?: unknown }).id : undefined;
      if (typeof id !== 'string') throw bad(ds, chainId, c, v, 'an entity reference { id }');
      return id;
    }
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v)) throw bad(ds, chainId, c, v, 'an integer');
      return v;
    case 'bool':
      if (typeof v !== 'boolean') throw bad(ds, chainId, c, v, 'a boolean');
      return v;
    case 'int8':
    case 'bigint':
      if (typeof v !== 'string' || !BIGINT_RE.test(v)) throw bad(ds, chainId, c, v, 'a BigInt as a decimal string');
      return v;
    case 'decimal':
      out.m = typeof v === 'string' ? DECIMAL_RE.exec(v) : null;
      if (!out.m) throw bad(ds, chainId, c, v, 'a BigDecimal as a decimal string');
      return v;
    case 'list':
      if (!Array.isArray(v)) throw bad(ds, chainId, c, v, 'a list');
      return v.map((x) => listItem(ds, chainId, c, v, x));
    case 'structs':
      if (!Array.isArray(v)) throw bad(ds, chainId, c, v, 'a list of objects');
      return v.map((x, i) => structItem(ds, chainId, c, c.struct!, x, `${c.field}[${i}]`));
  }
}

/** Maps one page of rows (subgraph entities or liquidity-list items). */
export function mapPage(ds: Dataset, chainId: number, items: unknown[]): MappedPage {
  const plan = planOf(ds);
  const outOfRange: Record<string, number> = {};
  const truncated: Record<string, number> = {};
  const parsed: { m: RegExpExecArray | null } = { m: null };
  const rows: Record<string, unknown>[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item !== 'object' || item === null) throw new GarbageError(ds.name, chainId, 'row', `expected an object, got ${JSON.stringify(item)}`);
    const row: Record<string, unknown> = {};
    for (const { c, keys } of plan) {
      const raw = valueAt(item, keys, c.parents);
      const v = raw === UNDER_NULL ? null : check(ds, chainId, c, raw, parsed);
      if ((c.cls === 'bigint' || c.cls === 'decimal') && typeof v === 'string') {
        const f = fit(c, v, parsed.m);
        if (f !== 'exact') {
          const counts = f === 'out' ? outOfRange : truncated;
          counts[c.column] = (counts[c.column] ?? 0) + 1;
        }
      }
      row[c.column] = v;
    }
    rows[i] = row;
  }
  return { rows, outOfRange, truncated };
}
