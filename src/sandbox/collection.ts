/** Runs one collection query (`where`, `orderBy`, `orderDirection`, `skip`, `first`) over a table, with a keyset fast path. */
import type { EntityModel } from '../schemas/entity-model.ts';
import { maxOf, minOf } from '../util/extremes.ts';
import { compareBytes, compileWhere, type FilterContext, scalarOps } from './filter.ts';
import { QueryError, rangeError } from './graph-errors.ts';
import type { Direction, Row, Table } from './table.ts';

/** graph-node's limits on `first` and `skip`. */
export interface Limits {
  readonly maxFirst: number;
  readonly maxSkip: number;
}

/** Collection arguments after variable coercion. */
export interface CollectionArgs {
  first?: number;
  skip?: number;
  orderBy?: string;
  orderDirection?: Direction;
  where?: Record<string, unknown> | null;
}

type Key = (r: Row) => unknown;

/** Checks `first`/`skip` against the limits with graph-node's texts. */
export function checkRange(args: CollectionArgs, limits: Limits): { first: number; skip: number } {
  const first = args.first ?? 100;
  const skip = args.skip ?? 0;
  if (first < 1 || first > limits.maxFirst) throw rangeError('first', limits.maxFirst, first);
  if (skip < 0 || skip > limits.maxSkip) throw rangeError('skip', limits.maxSkip, skip);
  return { first, skip };
}

function sortKey(entity: EntityModel, orderBy: string, ctx: FilterContext): { key: Key; type: string } {
  const [parent, child] = orderBy.split('__');
  const field = entity.field.get(parent ?? '');
  if (!field) throw new QueryError(`Entity \`${entity.name}\` has no attribute \`${orderBy}\``);
  if (child === undefined) {
    return { key: (r) => r[field.name], type: field.list ? 'List' : field.ref ? 'String' : field.type };
  }
  const target = ctx.entity(field.type);
  const cf = target.field.get(child);
  if (!cf || !field.ref || field.list)
    throw new QueryError(`Ordering by \`${orderBy}\` is not supported for type \`${entity.name}\``);
  return {
    key: (r) => (typeof r[field.name] === 'string' ? ctx.lookup(target.name, r[field.name] as string)?.[child] : null),
    type: cf.ref ? 'String' : cf.type,
  };
}

/** A comparator for `orderBy` then id, both in `dir`; NULLs last ascending and first descending, as in Postgres. */
export function rowComparator(
  entity: EntityModel,
  orderBy: string | undefined,
  dir: Direction,
  ctx: FilterContext,
): (a: Row, b: Row) => number {
  const sign = dir === 'desc' ? -1 : 1;
  // Ids in the order of their type: byte-wise for String and Bytes ids, numerically for Int8 ids (a timeseries').
  const idCmp = entity.field.get('id')?.type === 'Int8' ? scalarOps('Int8').cmp : compareBytes;
  const byId = (a: Row, b: Row) => sign * idCmp(a.id, b.id);
  if (!orderBy || orderBy === 'id') return byId;
  const { key, type } = sortKey(entity, orderBy, ctx);
  const cmp =
    type === 'List'
      ? (x: unknown, y: unknown) => compareBytes(JSON.stringify(x), JSON.stringify(y))
      : scalarOps(type).cmp;
  return (a, b) => {
    const x = key(a);
    const y = key(b);
    const xn = x === null || x === undefined;
    const yn = y === null || y === undefined;
    if (xn || yn) return xn && yn ? byId(a, b) : xn ? sign : -sign;
    return sign * cmp(x, y) || byId(a, b);
  };
}

/** The tightest bound a `where` puts on a numeric field in one direction (lower for asc, upper for desc). */
export function seqBound(
  where: Record<string, unknown> | null | undefined,
  field: string,
  dir: Direction,
): number | undefined {
  if (!where) return undefined;
  const keys = dir === 'asc' ? [field, `${field}_gt`, `${field}_gte`] : [field, `${field}_lt`, `${field}_lte`];
  let bound: number | undefined;
  const tighten = (v: number) => {
    bound = bound === undefined ? v : dir === 'asc' ? Math.max(bound, v) : Math.min(bound, v);
  };
  for (const k of keys) if (where[k] !== undefined && where[k] !== null) tighten(Number(where[k]));
  for (const sub of (where.and as Record<string, unknown>[] | undefined) ?? []) {
    const b = seqBound(sub, field, dir);
    if (b !== undefined) tighten(b);
  }
  const ors = where.or as Record<string, unknown>[] | undefined;
  if (ors && ors.length > 0) {
    const bs = ors.map((o) => seqBound(o, field, dir));
    if (bs.every((b) => b !== undefined)) tighten(dir === 'asc' ? minOf(bs as number[]) : maxOf(bs as number[]));
  }
  return bound !== undefined && Number.isFinite(bound) ? bound : undefined;
}

/** The tightest bound a `where` puts on `id` in one direction (from `id_gt`/`id_gte`/`id` for asc), at the top level or in `and`. */
export function idBound(where: Record<string, unknown> | null | undefined, dir: Direction): string | undefined {
  if (!where) return undefined;
  const keys = dir === 'asc' ? ['id', 'id_gt', 'id_gte'] : ['id', 'id_lt', 'id_lte'];
  let bound: string | undefined;
  const tighten = (v: string | undefined) => {
    if (
      v !== undefined &&
      (bound === undefined || (dir === 'asc' ? compareBytes(v, bound) > 0 : compareBytes(v, bound) < 0))
    )
      bound = v;
  };
  for (const k of keys) if (typeof where[k] === 'string') tighten(where[k] as string);
  for (const sub of (where.and as Record<string, unknown>[] | undefined) ?? []) tighten(idBound(sub, dir));
  return bound;
}

/**
 * Runs a collection query. `restrict` pre-filters rows (nested collections). `omit` is asked, in order, about each row
 * the answer would hold, and a row it answers true for is left out and the next one taken in its place (a fault that
 * loses rows silently: the page stays full and valid); it is asked about no row the answer would not hold.
 */
export function runCollection(
  table: Table,
  args: CollectionArgs,
  ctx: FilterContext,
  limits: Limits,
  restrict?: (r: Row) => boolean,
  omit?: (r: Row) => boolean,
): Row[] {
  const { first, skip } = checkRange(args, limits);
  const entity = table.entity;
  const pred = compileWhere(entity, args.where, ctx);
  const match = restrict ? (r: Row) => restrict(r) && pred(r) : pred;
  // graph-node ignores orderDirection when there is no orderBy.
  const dir: Direction = args.orderBy ? (args.orderDirection ?? 'asc') : 'asc';
  const cmp = rowComparator(entity, args.orderBy, dir, ctx);
  const want = skip + first;
  if (table.seq && args.orderBy === table.seq) {
    // Keyset fast path: groups arrive in seq order; only ids need sorting inside a group.
    const lower = seqBound(args.where, table.seq, dir);
    const upper = seqBound(args.where, table.seq, dir === 'asc' ? 'desc' : 'asc');
    const out: Row[] = [];
    for (const group of table.groups(ctx.view, dir, lower)) {
      const v = Number(group[0]?.[table.seq]);
      if (upper !== undefined && (dir === 'asc' ? v > upper : v < upper)) break;
      const hits = group.filter(match).sort(cmp);
      for (const r of hits) if (out.length >= want || !(out.length >= skip && omit?.(r))) out.push(r);
      if (out.length >= want) break;
    }
    return out.slice(skip, want);
  }
  if (table.byId && (!args.orderBy || args.orderBy === 'id')) {
    // Id keyset path: rows arrive in id order from the bound on.
    const out: Row[] = [];
    for (const r of table.byId(ctx.view, dir, idBound(args.where, dir))) {
      if (!match(r) || (out.length >= skip && omit?.(r))) continue;
      out.push(r);
      if (out.length >= want) break;
    }
    return out.slice(skip, want);
  }
  // General path: keep the best `want` rows, sorting in batches so memory stays bounded on large tables.
  let best: Row[] = [];
  for (const group of table.groups(ctx.view, 'asc')) {
    for (const r of group) {
      if (!match(r)) continue;
      best.push(r);
      if (best.length >= Math.max(4 * want, 10_000)) best = best.sort(cmp).slice(0, omit ? 2 * want : want);
    }
  }
  best.sort(cmp);
  if (!omit) return best.slice(skip, want);
  const out: Row[] = [];
  for (const r of best) {
    if (out.length >= want) break;
    if (!(out.length >= skip && omit(r))) out.push(r);
  }
  return out.slice(skip, want);
}
