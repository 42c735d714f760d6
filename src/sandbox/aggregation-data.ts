/**
 * Aggregations (`@aggregation(intervals: [...], source: "<timeseries>")`) for any subgraph schema, rolled up from the
 * sandbox's own timeseries rows as graph-node rolls them up (graphprotocol/graph-node 17ebd585,
 * `store/postgres/src/relational/rollup.rs`; `docs/aggregations.md` at 29445a8a):
 * - a bucket is the source rows whose `timestamp` falls in `[start, start + interval)`, `date_bin` from the epoch, one
 *   row per bucket and combination of dimensions (the fields without `@aggregate`);
 * - its `id` is the largest id among them (`max(id)`), its `timestamp` the bucket's start;
 * - `sum`, `count`, `min`, `max`, and `first`/`last` by id (`arg_min`/`arg_max` over `(value, id)`);
 * - a `cumulative` aggregate adds the latest earlier row of the same dimensions (`count` by summing), and only groups
 *   with rows in the bucket get one;
 * - a bucket is written when the first block past its end is, with that block's number (its `_change_block`); until
 *   then it is not served (graph-node's `current: ignore`).
 * A reorganisation rewrites the source rows, and with them every bucket they fall in.
 */
import type { EntityModel, FieldModel, SchemaModel } from '../schemas/entity-model.ts';
import * as X from '../util/exact.ts';
import { allRows, materializedTable, type Row, type Table, type View } from './table.ts';
import type { Timeline } from './timeline.ts';

/** The length of each interval graph-node supports, in seconds. */
export const INTERVAL_SECS: Readonly<Record<string, number>> = { hour: 3600, day: 86400 };

/** The aggregate functions graph-node supports (`AggregateFn`). */
const FUNCTIONS = new Set(['sum', 'count', 'min', 'max', 'first', 'last']);

/** The key of an aggregation's table for one interval (`TokenStats@hour`), beside the entities' tables. */
export const aggregationKey = (name: string, interval: string): string => `${name}@${interval}`;

/**
 * Why the sandbox cannot roll up an aggregation, or undefined: its source must be a timeseries of the schema, its
 * intervals `hour` or `day`, each aggregate a function graph-node has over a field of the source (expressions such as
 * `"priceUSD * amount"` are not evaluated here), and each dimension a field of the source.
 */
export function unservableAggregation(model: SchemaModel, agg: EntityModel): string | undefined {
  const { source, intervals } = agg.aggregation!;
  const src = model.byName.get(source);
  if (!src?.timeseries) return `aggregation ${agg.name}: its source ${source} is not a timeseries of the schema`;
  for (const i of intervals)
    if (!INTERVAL_SECS[i])
      return `aggregation ${agg.name}: interval "${i}" is not one of ${Object.keys(INTERVAL_SECS)}`;
  for (const f of agg.fields) {
    if (f.name === 'id' || f.name === 'timestamp') continue;
    const a = f.aggregate;
    if (!a) {
      if (!src.field.get(f.name)) return `aggregation ${agg.name}: dimension ${f.name} is not a field of ${source}`;
      continue;
    }
    if (!FUNCTIONS.has(a.fn))
      return `aggregation ${agg.name}.${f.name}: function "${a.fn}" is not one of ${[...FUNCTIONS]}`;
    if (a.fn !== 'count' && !(a.arg && src.field.get(a.arg)))
      return `aggregation ${agg.name}.${f.name}: arg "${a.arg ?? ''}" is not a field of ${source} (expressions are not served)`;
  }
  return undefined;
}

/** Compares two values of a numeric scalar type as graph-node's SQL does. */
function cmp(type: string, a: unknown, b: unknown): number {
  if (type === 'BigDecimal') return X.compare(X.parse(String(a)), X.parse(String(b)));
  const x = BigInt(String(a));
  const y = BigInt(String(b));
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The wire value of a whole number in a field's type: Int as a JSON number, the others as text. */
function wire(type: string, v: bigint): unknown {
  return type === 'Int' ? Number(v) : v.toString();
}

/**
 * A value of the source's type as the aggregate field's type holds it: graph-node's rollup computes `max(number)` in
 * SQL and stores it in the aggregate's column (`relational/rollup.rs`, graph-node f27eb5f), so `max: BigDecimal!` over
 * an `Int` answers the decimal text `"12"`, `sum: BigInt!` over an `Int` the integer text.
 */
function asType(type: string, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (type === 'BigDecimal') return X.format(X.normalize(X.parse(String(v))));
  if (type === 'Int') return Number(v);
  if (type === 'BigInt' || type === 'Int8') return String(v).split('.')[0];
  return v;
}

/** One aggregate over the rows of one bucket and group, in order of id, in the aggregate field's type. */
function aggregate(f: FieldModel, srcType: string, rows: readonly Row[]): unknown {
  return asType(f.type, aggregateOf(f, srcType, rows));
}

function aggregateOf(f: FieldModel, srcType: string, rows: readonly Row[]): unknown {
  const { fn, arg } = f.aggregate!;
  if (fn === 'count') return wire(f.type, BigInt(rows.length));
  const values = rows.map((r) => r[arg!]).filter((v) => v !== null && v !== undefined);
  if (!values.length) return null;
  if (fn === 'first') return values[0];
  if (fn === 'last') return values[values.length - 1];
  if (fn === 'min' || fn === 'max')
    return values.reduce((a, b) => ((fn === 'min' ? cmp(srcType, b, a) < 0 : cmp(srcType, b, a) > 0) ? b : a));
  // sum
  if (srcType === 'BigDecimal')
    return X.format(X.normalize(values.reduce<X.Dec>((s, v) => X.add(s, X.parse(String(v))), X.dec(0))));
  return wire(
    f.type,
    values.reduce<bigint>((s, v) => s + BigInt(String(v)), 0n),
  );
}

/** A cumulative aggregate: this bucket's value combined with the group's previous row's (`combine` in rollup.rs). */
function combine(f: FieldModel, srcType: string, prev: unknown, cur: unknown): unknown {
  return asType(f.type, combineOf(f, srcType, prev, cur));
}

function combineOf(f: FieldModel, srcType: string, prev: unknown, cur: unknown): unknown {
  if (prev === null || prev === undefined) return cur;
  if (cur === null || cur === undefined) return prev;
  const { fn } = f.aggregate!;
  if (fn === 'first') return prev;
  if (fn === 'last') return cur;
  if (fn === 'min') return cmp(srcType, cur, prev) < 0 ? cur : prev;
  if (fn === 'max') return cmp(srcType, cur, prev) > 0 ? cur : prev;
  if (fn === 'sum' && srcType === 'BigDecimal')
    return X.format(X.normalize(X.add(X.parse(String(prev)), X.parse(String(cur)))));
  // sum of whole numbers, and count (combined by summing)
  return wire(f.type, BigInt(String(prev)) + BigInt(String(cur)));
}

/** The seconds of a `timestamp` value: a `Timestamp` in microseconds, an `Int8` in seconds. */
function seconds(type: string, v: unknown): number {
  return type === 'Timestamp' ? Number(BigInt(String(v)) / 1_000_000n) : Number(v);
}

/** Orders ids as their type does: numerically for Int8 ids, byte-wise otherwise. */
function idOrder(type: string | undefined): (a: string, b: string) => number {
  if (type === 'Int8') return (a, b) => cmp('Int8', a, b);
  return (a, b) => (a < b ? -1 : a > b ? 1 : 0);
}

/** The tables of one aggregation, one per interval, keyed by `aggregationKey`, rolled up from `source`'s rows. */
export function aggregationTables(
  model: SchemaModel,
  agg: EntityModel,
  source: Table,
  tl: Timeline,
): Map<string, Table> {
  const src = model.byName.get(agg.aggregation!.source)!;
  const tsType = src.field.get('timestamp')?.type ?? 'Timestamp';
  const outTsType = agg.field.get('timestamp')?.type ?? 'Timestamp';
  const dims = agg.fields.filter((f) => !f.aggregate && f.name !== 'id' && f.name !== 'timestamp');
  const aggs = agg.fields.filter((f) => f.aggregate);
  const srcType = (f: FieldModel) => (f.aggregate!.arg ? src.field.get(f.aggregate!.arg)!.type : f.type);
  const byId = idOrder(src.field.get('id')?.type);
  const out = new Map<string, Table>();
  for (const interval of agg.aggregation!.intervals) {
    const secs = INTERVAL_SECS[interval]!;
    const build = (view: View): Row[] => {
      const now = tl.ts(view.at);
      // Source rows by bucket start, in id order, of the buckets that ended by the view's block.
      const buckets = new Map<number, Row[]>();
      for (const r of allRows(source, view)) {
        const start = Math.floor(seconds(tsType, r.timestamp) / secs) * secs;
        if (start + secs > now) continue;
        let b = buckets.get(start);
        if (!b) buckets.set(start, (b = []));
        b.push(r);
      }
      const rows: Row[] = [];
      const prev = new Map<string, Row>();
      for (const start of [...buckets.keys()].sort((a, b) => a - b)) {
        const groups = new Map<string, Row[]>();
        for (const r of buckets.get(start)!.sort((a, b) => byId(a.id, b.id))) {
          const key = JSON.stringify(dims.map((d) => r[d.name] ?? null));
          let g = groups.get(key);
          if (!g) groups.set(key, (g = []));
          g.push(r);
        }
        const written = tl.blockAtOrAfter(start + secs);
        for (const [key, g] of groups) {
          const row: Row = { id: g[g.length - 1]!.id, __block: written };
          row.timestamp = outTsType === 'Timestamp' ? String(BigInt(start) * 1_000_000n) : String(start);
          for (const d of dims) row[d.name] = g[0]![d.name] ?? null;
          const before = prev.get(key);
          for (const f of aggs) {
            const v = aggregate(f, srcType(f), g);
            row[f.name] = f.aggregate!.cumulative && before ? combine(f, srcType(f), before[f.name], v) : v;
          }
          prev.set(key, row);
          rows.push(row);
        }
      }
      return rows;
    };
    out.set(aggregationKey(agg.name, interval), materializedTable(agg, build));
  }
  return out;
}
