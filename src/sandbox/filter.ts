/** Compiles a graph-node `where` object into a row predicate with graph-node's semantics (SQL NULL rules, byte-wise strings). */

import type { EntityModel, FieldModel } from '../schemas/entity-model.ts';
import * as exact from '../util/exact.ts';
import { decodeError, mixedOrError, QueryError } from './graph-errors.ts';
import type { Row, View } from './table.ts';

/** A predicate over rows of one entity. */
export type Predicate = (row: Row) => boolean;

/** What a filter needs to follow references. */
export interface FilterContext {
  readonly view: View;
  entity(name: string): EntityModel;
  /** The referenced row, or undefined. */
  lookup(entity: string, id: string): Row | undefined;
  /** Rows of `entity` whose `field` holds `id` (for `@derivedFrom` filters). */
  referencing(entity: string, field: string, id: string): readonly Row[];
}

const SUFFIX_ORDER = [
  '_not_contains_nocase',
  '_not_starts_with_nocase',
  '_not_ends_with_nocase',
  '_contains_nocase',
  '_starts_with_nocase',
  '_ends_with_nocase',
  '_not_starts_with',
  '_not_ends_with',
  '_not_contains',
  '_starts_with',
  '_ends_with',
  '_contains',
  '_not_in',
  '_gte',
  '_lte',
  '_not',
  '_in',
  '_gt',
  '_lt',
];

/** Byte-wise (UTF-8) order of two strings, as Postgres with the C collation. */
export function compareBytes(a: string, b: string): number {
  if (a === b) return 0;
  // UTF-16 order equals UTF-8 byte order except where the first differing code units are a surrogate (a code point
  // above U+FFFF, four bytes in UTF-8) and a unit in U+E000..U+FFFF: there the surrogate sorts last in UTF-8.
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length < b.length ? -1 : 1;
  const x = a.charCodeAt(i);
  const y = b.charCodeAt(i);
  const xs = x >= 0xd800 && x <= 0xdfff;
  const ys = y >= 0xd800 && y <= 0xdfff;
  if (xs !== ys && x >= 0xd800 && y >= 0xd800) return xs ? 1 : -1;
  return x < y ? -1 : 1;
}

/** Order of two integers in decimal text: as numbers when both are short enough to be exact, else as BigInt. */
function compareIntText(a: string, b: string): number {
  if (a.length <= 15 && b.length <= 15) {
    const d = Number(a) - Number(b);
    if (!Number.isNaN(d)) return d < 0 ? -1 : d > 0 ? 1 : 0;
  }
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Splits a where key into its field and suffix. */
export function splitKey(entity: EntityModel, key: string): { field: FieldModel; suffix: string } | undefined {
  const plain = entity.field.get(key);
  if (plain) return { field: plain, suffix: '' };
  if (key.endsWith('_')) {
    const f = entity.field.get(key.slice(0, -1));
    if (f) return { field: f, suffix: '_' };
  }
  for (const s of SUFFIX_ORDER) {
    if (!key.endsWith(s)) continue;
    const f = entity.field.get(key.slice(0, -s.length));
    if (f) return { field: f, suffix: s };
  }
  return undefined;
}

type Cmp = (a: unknown, b: unknown) => number;

function bytesValue(v: unknown): string {
  const s = String(v).toLowerCase();
  const body = s.startsWith('0x') ? s.slice(2) : s;
  if (!/^[0-9a-f]*$/.test(body) || body.length % 2 === 1) throw decodeError('Bytes', String(v));
  return `0x${body}`;
}

function bigintValue(v: unknown): bigint {
  try {
    return BigInt(String(v));
  } catch {
    throw decodeError('BigInt', String(v));
  }
}

function decimalValue(v: unknown): exact.Dec {
  try {
    return exact.parse(String(v));
  } catch {
    throw decodeError('BigDecimal', String(v));
  }
}

/** A comparator and an input normalizer for one scalar type. */
export function scalarOps(type: string): { cmp: Cmp; norm: (v: unknown) => unknown } {
  switch (type) {
    case 'BigInt':
    case 'Int8':
      return { cmp: (a, b) => compareIntText(String(a), String(b)), norm: (v) => bigintValue(v).toString() };
    case 'BigDecimal':
      return {
        cmp: (a, b) => exact.compare(exact.parse(a as string), exact.parse(b as string)),
        norm: (v) => exact.format(decimalValue(v)),
      };
    case 'Int':
    case 'Timestamp':
      return { cmp: (a, b) => Number(a) - Number(b), norm: (v) => v };
    case 'Boolean':
      return { cmp: (a, b) => Number(a) - Number(b), norm: (v) => v };
    case 'Bytes':
      return { cmp: (a, b) => compareBytes(a as string, b as string), norm: bytesValue };
    default:
      return { cmp: (a, b) => compareBytes(String(a), String(b)), norm: (v) => v };
  }
}

function stringOp(suffix: string, want: string): ((s: string) => boolean) | undefined {
  const nocase = suffix.endsWith('_nocase');
  const w = nocase ? want.toLowerCase() : want;
  const base = suffix.replace('_nocase', '').replace('_not', '');
  const test =
    base === '_contains'
      ? (s: string) => s.includes(w)
      : base === '_starts_with'
        ? (s: string) => s.startsWith(w)
        : base === '_ends_with'
          ? (s: string) => s.endsWith(w)
          : undefined;
  if (!test) return undefined;
  const neg = suffix.startsWith('_not');
  return (s) => test(nocase ? s.toLowerCase() : s) !== neg;
}

/** Byte-aligned containment of one hex byte string in another (bytea `position`). */
function containsBytes(hay: string, needle: string): boolean {
  const h = hay.slice(2);
  const n = needle.slice(2);
  for (let at = h.indexOf(n); at >= 0; at = h.indexOf(n, at + 1)) if (at % 2 === 0) return true;
  return false;
}

function scalarPredicate(name: string, type: string, suffix: string, raw: unknown): Predicate {
  const { cmp, norm } = scalarOps(type);
  if (raw === null) {
    if (suffix === '') return (r) => r[name] === null || r[name] === undefined;
    if (suffix === '_not') return (r) => r[name] !== null && r[name] !== undefined;
    return () => false;
  }
  if (suffix === '_in' || suffix === '_not_in') {
    if (!Array.isArray(raw)) throw new QueryError('Non-list value passed to `_in` filter');
    const set = raw.map(norm);
    const has = (v: unknown) => set.some((x) => cmp(v, x) === 0);
    return suffix === '_in' ? (r) => r[name] != null && has(r[name]) : (r) => r[name] != null && !has(r[name]);
  }
  const want = norm(raw);
  if (type === 'Bytes' && (suffix === '_contains' || suffix === '_not_contains')) {
    const neg = suffix === '_not_contains';
    return (r) => r[name] != null && containsBytes(String(r[name]), String(want)) !== neg;
  }
  const str = stringOp(suffix, String(want));
  if (str) return (r) => r[name] != null && str(String(r[name]));
  const test: Record<string, (c: number) => boolean> = {
    '': (c) => c === 0,
    _not: (c) => c !== 0,
    _gt: (c) => c > 0,
    _lt: (c) => c < 0,
    _gte: (c) => c >= 0,
    _lte: (c) => c <= 0,
  };
  const t = test[suffix];
  if (!t) throw new QueryError(`Filter \`${name}${suffix}\` is not supported`);
  return (r) => r[name] != null && t(cmp(r[name], want));
}

function listPredicate(field: FieldModel, suffix: string, raw: unknown): Predicate {
  const name = field.name;
  const elType = field.ref ? 'String' : field.type;
  const { cmp, norm } = scalarOps(elType);
  const want = Array.isArray(raw) ? raw.map(norm) : [];
  const nocase = suffix.endsWith('_nocase');
  const eq = (a: unknown, b: unknown) =>
    nocase ? String(a).toLowerCase() === String(b).toLowerCase() : cmp(a, b) === 0;
  const containsAll = (list: unknown[]) => want.every((w) => list.some((x) => eq(x, w)));
  const sameList = (list: unknown[]) => list.length === want.length && list.every((x, i) => eq(x, want[i]));
  const ops: Record<string, (l: unknown[]) => boolean> = {
    '': sameList,
    _not: (l) => !sameList(l),
    _contains: containsAll,
    _contains_nocase: containsAll,
    _not_contains: (l) => !containsAll(l),
    _not_contains_nocase: (l) => !containsAll(l),
  };
  const op = ops[suffix];
  if (!op) throw new QueryError(`Filter \`${name}${suffix}\` is not supported`);
  return (r) => Array.isArray(r[name]) && op(r[name] as unknown[]);
}

function childPredicate(field: FieldModel, raw: unknown, ctx: FilterContext, depth: number): Predicate {
  if (depth > 0)
    throw new QueryError(`Child filter nesting not supported by value \`${field.name}\`: \`${JSON.stringify(raw)}\``);
  const child = ctx.entity(field.type);
  const inner = compileWhere(child, raw as Record<string, unknown>, ctx, depth + 1);
  if (field.derivedFrom) {
    const back = field.derivedFrom;
    return (r) => ctx.referencing(child.name, back, r.id).some(inner);
  }
  if (field.list) {
    return (r) =>
      Array.isArray(r[field.name]) &&
      (r[field.name] as string[]).some((id) => {
        const c = ctx.lookup(child.name, id);
        return c !== undefined && inner(c);
      });
  }
  return (r) => {
    const id = r[field.name];
    if (typeof id !== 'string') return false;
    const c = ctx.lookup(child.name, id);
    return c !== undefined && inner(c);
  };
}

/** Compiles a `where` object. Keys are ANDed; `and`/`or` take lists; `or` beside column filters is an error. */
export function compileWhere(
  entity: EntityModel,
  where: Record<string, unknown> | undefined | null,
  ctx: FilterContext,
  depth = 0,
): Predicate {
  if (!where) return () => true;
  const keys = Object.keys(where).filter((k) => where[k] !== undefined);
  if (keys.includes('or')) {
    const columns = keys.filter((k) => k !== 'or' && k !== 'and' && k !== '_change_block');
    if (columns.length > 0) throw mixedOrError(columns);
  }
  const preds: Predicate[] = [];
  for (const key of keys) {
    const raw = where[key];
    if (key === 'and' || key === 'or') {
      const parts = ((raw as Record<string, unknown>[] | null) ?? []).map((w) => compileWhere(entity, w, ctx, depth));
      preds.push(key === 'and' ? (r) => parts.every((p) => p(r)) : (r) => parts.some((p) => p(r)));
      continue;
    }
    if (key === '_change_block') {
      const gte = Number((raw as { number_gte: number }).number_gte);
      preds.push((r) => r.__block >= gte);
      continue;
    }
    const split = splitKey(entity, key);
    if (!split) throw new QueryError(`Entity \`${entity.name}\` has no attribute \`${key}\``);
    const { field, suffix } = split;
    if (suffix === '_') preds.push(childPredicate(field, raw, ctx, depth));
    else if (field.list) preds.push(listPredicate(field, suffix, raw));
    else preds.push(scalarPredicate(field.name, field.ref ? 'String' : field.type, suffix, raw));
  }
  if (preds.length === 1) return preds[0]!;
  return (r) => preds.every((p) => p(r));
}
