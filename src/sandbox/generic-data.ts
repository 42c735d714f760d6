/**
 * A generated world for any subgraph schema (`pool-export sandbox --subgraph NAME=FILE`): every entity gets rows
 * created across the chain's history, references that resolve at every block, and values of every scalar type at
 * their extremes, in graph-node's wire encoding (graph-node-semantics.md §1.5):
 * - immutable entities (timeseries included) are written once, at their creation block; a reorganisation rewrites the
 *   rows of the blocks it replaces (new ids, new values), as a chain's new blocks do;
 * - mutable entities change every few blocks: each version's values, and its block (`_change_block`), are its own;
 * - a field named `timestamp` holds its block's time (microseconds for a `Timestamp`), and orders the rows.
 * Nothing here knows the schema's meaning: a schema's numbers are drawn, not computed by any mapping.
 */
import type { EntityModel, FieldModel, SchemaModel } from '../schemas/entity-model.ts';
import * as X from '../util/exact.ts';
import { aggregationTables, unservableAggregation } from './aggregation-data.ts';
import { hashString, hexOf, mix } from './hash.ts';
import { interfaceEntity, interfaceTable } from './interface-table.ts';
import { materializedTable, type Row, type Table, type View } from './table.ts';
import { eventHash, indexOfHash } from './table-kinds.ts';
import { EventStream } from './timeline.ts';
import type { World } from './world.ts';

/** Blocks between the versions of a mutable row, by row (so that some change often and some rarely). */
const PERIODS = [5, 40, 300, 3000] as const;

/** Strings a hostile or careless mapping stores: markup, terminal escapes, SQL, emoji, empty, long. */
const ODD_STRINGS: readonly string[] = [
  '<script>alert("x")</script>',
  '\u001b[31mred\u001b[0m\u0007',
  `'); DROP TABLE t;-- "q" \\`,
  'Ünïcödé 🦄 «text»',
  '',
  `${'long '.repeat(800)}end`,
];

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;
const INT8_MIN = -(2n ** 63n);
const INT8_MAX = 2n ** 63n - 1n;

/** Rows of each entity in the history, from the sandbox's scale: immutable ones as events, mutable ones fewer. */
export function genericCounts(scale: number): { immutable: number; mutable: number } {
  return { immutable: Math.max(20, Math.floor(scale / 50)), mutable: Math.max(8, Math.floor(scale / 200)) };
}

/**
 * Why the sandbox cannot serve a schema, or undefined: it serves entities (timeseries included), enums, interfaces
 * (`interface-table.ts`) and aggregations over timeseries (`aggregation-data.ts`).
 */
export function unservable(model: SchemaModel): string | undefined {
  for (const agg of model.aggregations ?? []) {
    const why = unservableAggregation(model, agg);
    if (why) return why;
  }
  // A reference to an interface no entity implements is null (a list of them empty), as graph-node answers it: a row
  // can name no row of it. Where the field is non-null, graph-node would answer every row with an error.
  for (const e of model.entities)
    for (const f of e.fields)
      if (f.ref && f.nonNull && !f.list && !f.derivedFrom && noImplementer(model, f.type))
        return `field ${e.name}.${f.name} is a non-null ${f.type}, an interface no entity implements: graph-node would answer each row of ${e.name} with an error`;
  if (model.entities.length === 0) return 'it has no @entity type';
  return undefined;
}

/** Builds a table for every entity of a schema, for one chain. `name` (the subgraph's) seeds the values. */
export function genericTables(model: SchemaModel, w: World, name: string): Map<string, Table> {
  const tag = hashString(name) % 100_000;
  const counts = genericCounts(w.opts.swaps);
  const streams = new Map(
    model.entities.map((e) => [e.name, new EventStream(w.tl, e.immutable ? counts.immutable : counts.mutable)]),
  );
  const cx: Context = { model, w, tag, streams };
  const tables = new Map<string, Table>();
  for (const [ei, e] of model.entities.entries())
    tables.set(e.name, e.immutable ? immutableTable(cx, e, ei) : mutableTable(cx, e, ei));
  // An interface's rows: those of the entities that implement it, each marked with its type (`interfaceTable`).
  for (const i of model.interfaces?.values() ?? [])
    tables.set(
      i.name,
      interfaceTable(
        interfaceEntity(model, i.name)!,
        i.implementers.map((n) => [n, tables.get(n)!]),
      ),
    );
  for (const agg of model.aggregations ?? [])
    for (const [key, t] of aggregationTables(model, agg, tables.get(agg.aggregation!.source)!, w.tl))
      tables.set(key, t);
  return tables;
}

interface Context {
  readonly model: SchemaModel;
  readonly w: World;
  readonly tag: number;
  /** Each entity's creations: row `k` is created in `blockOf(k)`; row 0 in the history's first block. */
  readonly streams: ReadonlyMap<string, EventStream>;
}

/** The id of row `k` of an entity whose rows never change id. */
function stableId(cx: Context, e: EntityModel, ei: number, k: number): string {
  const type = e.field.get('id')?.type;
  if (type === 'Int8' || type === 'Int') return String(k + 1);
  return hexOf(5, cx.w.opts.seed, cx.w.chainId, cx.tag, ei, k);
}

/**
 * The id of a row of a referenced entity, drawn among the rows that exist at block `at` (row 0 always does); for an
 * interface, among the rows of one of the entities that implement it.
 */
function refId(cx: Context, target: string, at: number, h: number): string {
  const implementers = cx.model.interfaces?.get(target)?.implementers;
  if (implementers) return refId(cx, implementers[mix(h, 13) % implementers.length]!, at, h);
  const e = cx.model.byName.get(target)!;
  const ei = cx.model.entities.indexOf(e);
  const stream = cx.streams.get(target)!;
  const k = h % Math.max(1, stream.count(at));
  if (e.immutable) return immutableRow(cx, e, ei, k).id;
  return stableId(cx, e, ei, k);
}

/** A value of one scalar, enum or reference field, drawn from `h` (at block `at`, for references and times). */
function scalarValue(cx: Context, f: FieldModel, h: number, at: number): unknown {
  if (f.ref) return refId(cx, f.type, at, h);
  if (f.enum) {
    const values = cx.model.enums?.get(f.type) ?? [];
    return values[h % values.length] ?? null;
  }
  const pick = h % 8;
  switch (f.type) {
    case 'Boolean':
      return h % 2 === 0;
    case 'Int':
      return pick === 0 ? INT_MIN : pick === 1 ? INT_MAX : pick === 2 ? 0 : (h % 2_000_001) - 1_000_000;
    case 'Int8':
      return String(
        pick === 0 ? INT8_MIN : pick === 1 ? INT8_MAX : BigInt(h) * BigInt(mix(h, 3) % 2 ** 30) - 2n ** 50n,
      );
    case 'BigInt': {
      // Up to 2^256 - 1 and down to -(2^255), as uint256 and int256 amounts reach.
      if (pick === 0) return (2n ** 256n - 1n).toString();
      if (pick === 1) return (-(2n ** 255n)).toString();
      if (pick === 2) return '0';
      return (BigInt(h) * 10n ** BigInt(mix(h, 5) % 40) * (pick === 3 ? -1n : 1n)).toString();
    }
    case 'BigDecimal': {
      // At most 34 significant digits, tiny and huge scales, negative values: graph-node's normalized text.
      if (pick === 0) return '0';
      const digits = BigInt(`${h}${mix(h, 1)}${mix(h, 2)}`.slice(0, 1 + (mix(h, 4) % 34)));
      const m = pick === 1 ? -digits : digits;
      return X.format(X.normalize(X.dec(m, (mix(h, 6) % 60) - 20)));
    }
    case 'Bytes':
      return pick === 0 ? '0x' : hexOf(1 + (h % 8), h, 9);
    case 'Timestamp':
      return String(BigInt(cx.w.tl.ts(at)) * 1_000_000n + BigInt(h % 1_000_000));
    default: {
      // ID and String fields other than the row's id.
      if (pick === 0) return ODD_STRINGS[mix(h, 7) % ODD_STRINGS.length]!;
      return `${f.name} ${h % 100_000}`;
    }
  }
}

/**
 * `n` distinct rows of a referenced entity that exist at block `at` (fewer when it has fewer), drawn from `h`: a run of
 * consecutive rows, spread over the implementers of an interface.
 */
function refIds(cx: Context, target: string, at: number, h: number, n: number): string[] {
  const implementers = cx.model.interfaces?.get(target)?.implementers;
  if (implementers) {
    const out = new Set<string>();
    const share = Math.ceil(n / implementers.length);
    for (const [j, t] of implementers.entries())
      for (const id of refIds(cx, t, at, mix(h, 14, j), share)) if (out.size < n) out.add(id);
    return [...out];
  }
  const e = cx.model.byName.get(target)!;
  const ei = cx.model.entities.indexOf(e);
  const count = Math.max(1, cx.streams.get(target)!.count(at));
  const start = h % count;
  return Array.from({ length: Math.min(n, count) }, (_, i) => {
    const k = (start + i) % count;
    return e.immutable ? immutableRow(cx, e, ei, k).id : stableId(cx, e, ei, k);
  });
}

/**
 * Lengths of a list of references: mostly 0 to 3, and 100, 101 and 260 items (as many as the referenced entity has
 * rows at the block, at most), on either side of graph-node's default `first` of 100 for a nested collection and past
 * the exporter's first page of a list (`NESTED_FIRST`).
 */
function refListLength(h: number): number {
  const c = mix(h, 11) % 16;
  return c === 0 ? 100 : c === 1 ? 101 : c === 2 ? 260 : c % 4;
}

/** Whether `type` is an interface that no entity of the schema implements. */
const noImplementer = (model: SchemaModel, type: string) => model.interfaces?.get(type)?.implementers.length === 0;

/** A field's value: null for some rows of a nullable field; lists of up to three elements, or long lists of references. */
function fieldValue(cx: Context, f: FieldModel, h: number, at: number): unknown {
  if (f.ref && noImplementer(cx.model, f.type)) return f.list ? [] : null;
  if (!f.nonNull && h % 7 === 0) return null;
  if (!f.list) return scalarValue(cx, f, h, at);
  // A list of references names each row once: graph-node answers it as a collection of the rows it names.
  if (f.ref) return refIds(cx, f.type, at, mix(h, 12), refListLength(h));
  return Array.from({ length: mix(h, 11) % 4 }, (_, i) => scalarValue(cx, f, mix(h, 12, i), at));
}

/** The block time of a row in its `timestamp` field's type (a BigInt named in milliseconds: in milliseconds). */
function timeValue(cx: Context, f: FieldModel, block: number): unknown {
  const ts = cx.w.tl.ts(block);
  if (f.type === 'Timestamp') return String(BigInt(ts) * 1_000_000n);
  if (f.type === 'BigInt' && MILLIS_NAME.test(f.name)) return String(BigInt(ts) * 1000n);
  return f.type === 'Int' ? ts : String(ts);
}

/** A field a mapping fills with a block's time, by its name: `createdAtTimestamp`, `updatedAt`, `startTime`, `closedAtMs`. */
const TIME_NAME = /(^timestamp$|Timestamp$|[a-z]At$|[a-z]Time$|[a-z]AtMs$|TimestampMs$|[a-z]TimeMs$)/;
/** Such a field counted in milliseconds. */
const MILLIS_NAME = /Ms$/;

/** Whether a field holds its row's block time: `timestamp`, or a scalar Int or BigInt named as a time. */
const isTime = (f: FieldModel) =>
  f.name === 'timestamp' || (!f.list && (f.type === 'Int' || f.type === 'BigInt') && TIME_NAME.test(f.name));

/** The fields a row stores (those `@derivedFrom` are not stored: graph-node derives them from the other side). */
const stored = (e: EntityModel) => e.fields.filter((f) => !f.derivedFrom && f.name !== 'id');

/**
 * The fields of a timeseries that a non-null aggregate reads (`maxDifficulty: BigInt! @aggregate(fn: "max", arg:
 * "difficulty")`): a value in every row, as a mapping that declares the aggregate non-null gives them (graph-node's
 * rollup stores `max(difficulty)` as SQL computes it, and a bucket of nulls would answer null for a non-null field).
 */
function aggregatedFields(model: SchemaModel, e: EntityModel): ReadonlySet<string> {
  let out = AGGREGATED.get(e);
  if (!out) {
    const found = new Set<string>();
    for (const a of model.aggregations ?? [])
      if (a.aggregation?.source === e.name)
        for (const f of a.fields) if (f.aggregate?.arg && f.nonNull) found.add(f.aggregate.arg);
    AGGREGATED.set(e, (out = found));
  }
  return out;
}

/** `aggregatedFields` of each timeseries, worked out once (rows are filled by the thousand). */
const AGGREGATED = new WeakMap<EntityModel, ReadonlySet<string>>();

/** Fills a row's fields from a hash of its entity, row, version and block salt. */
function fill(cx: Context, e: EntityModel, row: Row, parts: number[], at: number): Row {
  const aggregated = e.timeseries ? aggregatedFields(cx.model, e) : undefined;
  for (const [fi, f] of stored(e).entries()) {
    const field = aggregated?.has(f.name) ? { ...f, nonNull: true } : f;
    // A time named as one holds the block's (a nullable one is null in some rows, as any nullable field).
    const h = mix(...parts, fi);
    row[f.name] = !isTime(f)
      ? fieldValue(cx, field, h, at)
      : f.name !== 'timestamp' && !field.nonNull && h % 7 === 0
        ? null
        : timeValue(cx, f, at);
  }
  return row;
}

/** Row `k` of an immutable entity: its id and values are those of its block as the chain now has it. */
function immutableRow(cx: Context, e: EntityModel, ei: number, k: number): Row {
  const { w } = cx;
  const block = cx.streams.get(e.name)!.blockOf(k);
  const salt = w.tl.salt(block);
  const idType = e.field.get('id')?.type;
  // A timeseries' ids are the store's sequence; other ids carry their row's number (eventHash), so a row is found by id.
  const id = idType === 'Int8' || idType === 'Int' ? String(k + 1) : eventHash(w.tl, cx.tag * 64 + ei, k, salt);
  return fill(cx, e, { id, __block: block }, [w.opts.seed, w.chainId, cx.tag, ei, k, salt], block);
}

/** The field that orders an immutable entity's rows by block, when it has one in seconds. */
function seqField(e: EntityModel): string | undefined {
  const f = e.field.get('timestamp');
  return f && !f.list && (f.type === 'BigInt' || f.type === 'Int' || f.type === 'Int8') ? f.name : undefined;
}

function immutableTable(cx: Context, e: EntityModel, ei: number): Table {
  const stream = cx.streams.get(e.name)!;
  const tl = cx.w.tl;
  const seq = seqField(e);
  const row = (k: number) => immutableRow(cx, e, ei, k);
  const numeric = e.field.get('id')?.type === 'Int8' || e.field.get('id')?.type === 'Int';
  function* groups(view: View, dir: 'asc' | 'desc', from?: number): Iterable<Row[]> {
    const n = stream.count(view.at);
    const start = seq && from !== undefined ? stream.firstIndexAt(tl.blockAtOrAfter(from)) : 0;
    if (dir === 'asc') {
      for (let i = start; i < n; ) {
        const end = Math.min(n, stream.firstIndexAt(stream.blockOf(i) + 1));
        yield Array.from({ length: end - i }, (_, j) => row(i + j));
        i = end;
      }
      return;
    }
    let i = seq && from !== undefined ? Math.min(n, stream.firstIndexAt(tl.blockAtOrAfter(from + 1))) - 1 : n - 1;
    while (i >= 0) {
      const first = stream.firstIndexAt(stream.blockOf(i));
      yield Array.from({ length: i - first + 1 }, (_, j) => row(first + j));
      i = first - 1;
    }
  }
  return {
    entity: e,
    ...(seq ? { seq } : {}),
    groups,
    get(id, view) {
      const k = numeric ? Number(id) - 1 : indexOfHash(id);
      if (!Number.isInteger(k) || k < 0 || k >= stream.count(view.at)) return undefined;
      const r = row(k);
      return r.id === id ? r : undefined;
    },
  };
}

function mutableTable(cx: Context, e: EntityModel, ei: number): Table {
  const { w } = cx;
  const stream = cx.streams.get(e.name)!;
  return materializedTable(e, (view) =>
    Array.from({ length: stream.count(view.at) }, (_, k): Row => {
      const created = stream.blockOf(k);
      const period = PERIODS[k % PERIODS.length]!;
      const version = Math.max(0, Math.floor((view.at - created) / period));
      const updated = created + version * period;
      const salt = w.tl.salt(updated);
      const row: Row = { id: stableId(cx, e, ei, k), __block: updated };
      return fill(cx, e, row, [w.opts.seed, w.chainId, cx.tag, ei, k, version, salt], updated);
    }),
  );
}
