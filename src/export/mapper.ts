/** Turns a page of upstream JSON into flat rows for the warehouse, checking every value's type. Pure and synchronous. */
import { chainName } from '../config/chains.ts';
import type { Column, Dataset } from '../catalog/catalog.ts';

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

function pathValue(obj: unknown, path: string): unknown {
  let v: unknown = obj;
  for (const key of path.split('.')) {
    if (v === null) return null;
    if (typeof v !== 'object' || v === undefined || !(key in (v as object))) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** Where a column's value sits in an upstream row; references point at the object, whose `id` is checked. */
function valuePath(c: Column, list: boolean): string {
  const path = list ? c.select : c.field;
  return c.cls === 'ref' ? path.replace(/\.id$/, '') : path;
}

/** How a numeric text fits its column: exactly, cut to 18 fractional digits, or not at all. */
function fit(c: Column, v: string): 'exact' | 'truncated' | 'out' {
  if (c.cls === 'bigint') {
    const b = BigInt(v);
    return b <= HUGEINT_MAX && b >= HUGEINT_MIN ? 'exact' : 'out';
  }
  const m = DECIMAL_RE.exec(v)!;
  if (m[1]!.replace(/^0+/, '').length > DEC_INT_DIGITS) return 'out';
  return (m[2] ?? '').length > DEC_FRAC_DIGITS ? 'truncated' : 'exact';
}

function check(ds: Dataset, chainId: number, c: Column, v: unknown): unknown {
  const bad = (what: string) => new GarbageError(ds.name, chainId, c.field, `expected ${what}, got ${JSON.stringify(v)?.slice(0, 80)}`);
  if (v === undefined) throw new GarbageError(ds.name, chainId, c.field, 'the field is missing from the answer');
  if (v === null) {
    if (!c.nullable) throw bad('a value (the schema says non-null)');
    return null;
  }
  switch (c.cls) {
    case 'text':
      if (typeof v !== 'string') throw bad('a string');
      return v;
    case 'ref': {
      const id = typeof v === 'object' ? (v as { id?: unknown }).id : undefined;
      if (typeof id !== 'string') throw bad('an entity reference { id }');
      return id;
    }
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v)) throw bad('an integer');
      return v;
    case 'bool':
      if (typeof v !== 'boolean') throw bad('a boolean');
      return v;
    case 'int8':
    case 'bigint':
      if (typeof v !== 'string' || !BIGINT_RE.test(v)) throw bad('a BigInt as a decimal string');
      return v;
    case 'decimal':
      if (typeof v !== 'string' || !DECIMAL_RE.test(v)) throw bad('a BigDecimal as a decimal string');
      return v;
    case 'list':
      if (!Array.isArray(v)) throw bad('a list');
      return v.map((x) => (typeof x === 'object' && x !== null && 'id' in x ? String((x as { id: unknown }).id) : typeof x === 'string' ? x : (() => { throw bad('a list of strings'); })()));
  }
}

/** Maps one page of rows (subgraph entities or liquidity-list items). */
export function mapPage(ds: Dataset, chainId: number, items: unknown[]): MappedPage {
  const list = ds.kind === 'list';
  const outOfRange: Record<string, number> = {};
  const truncated: Record<string, number> = {};
  const rows = items.map((item) => {
    if (typeof item !== 'object' || item === null) throw new GarbageError(ds.name, chainId, 'row', `expected an object, got ${JSON.stringify(item)}`);
    const row: Record<string, unknown> = {};
    for (const c of ds.columns) {
      const v = check(ds, chainId, c, pathValue(item, valuePath(c, list)));
      if ((c.cls === 'bigint' || c.cls === 'decimal') && typeof v === 'string') {
        const f = fit(c, v);
        if (f !== 'exact') {
          const counts = f === 'out' ? outOfRange : truncated;
          counts[c.column] = (counts[c.column] ?? 0) + 1;
        }
      }
      row[c.column] = v;
    }
    return row;
  });
  return { rows, outOfRange, truncated };
}
