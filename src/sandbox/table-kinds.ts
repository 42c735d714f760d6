/** Table builders for the three shapes of generated data: event streams, time buckets summed from events, and small tables. */

import type { EntityModel } from '../schemas/entity-model.ts';
import { firstWord, hashNumber, hashWords, mix } from './hash.ts';
import { IdIndex } from './id-index.ts';
import type { Direction, Row, Table, View } from './table.ts';
import type { EventStream, Timeline } from './timeline.ts';

/** Events in one block from which a table keeps the block's rows for the next page. */
const BIG_GROUP = 256;

/** Cached bucket results kept per table: a day of 10M-swap history is ~30k events, so a few dozen buckets is plenty. */
const BUCKET_CACHE_SIZE = 64;

/**
 * A transaction hash for event `i` of a stream: random-looking, with the index recoverable from the last two words,
 * so that a row can be found by id without an index.
 */
export function eventHash(tl: Timeline, tag: number, i: number, salt: number): string {
  return hashWords(mix(tl.seed, tl.spec.chainId, tag, i, salt), i);
}

/** The event index encoded in a hash made by `eventHash` (the first 66 characters of an id), or -1. */
export function indexOfHash(hash: string): number {
  return hashNumber(hash.slice(0, 66));
}

/** Id indexes by stream and tag: tables over the same events with the same ids (swaps and transactions) share one. */
const idIndexes = new WeakMap<EventStream, Map<number, IdIndex>>();

function idIndexOf(stream: EventStream, tag: number): IdIndex {
  let byTag = idIndexes.get(stream);
  if (!byTag) idIndexes.set(stream, (byTag = new Map()));
  let index = byTag.get(tag);
  if (!index) {
    const tl = stream.tl;
    byTag.set(
      tag,
      (index = new IdIndex(stream, (i) =>
        firstWord(mix(tl.seed, tl.spec.chainId, tag, i, tl.salt(stream.blockOf(i)))),
      )),
    );
  }
  return index;
}

/**
 * A table with one row per event of a stream, ordered by the block timestamp field `seq`. Every row's id starts with
 * `eventHash(tl, tag, i, salt)`, which the id index relies on.
 */
export function eventTable(
  entity: EntityModel,
  stream: EventStream,
  tag: number,
  seq: string | undefined,
  row: (i: number) => Row,
): Table {
  const tl = stream.tl;
  const ids = idIndexOf(stream, tag);
  // The last large group (a burst of events in one block), kept: keyset pages through it would each rebuild it whole.
  let big: { start: number; end: number; epoch: number; rows: Row[] } | undefined;
  const group = (start: number, end: number): Row[] => {
    if (big && big.start === start && big.end === end && big.epoch === tl.epoch) return big.rows;
    const g: Row[] = [];
    for (let i = start; i < end; i++) g.push(row(i));
    if (g.length >= BIG_GROUP) big = { start, end, epoch: tl.epoch, rows: g };
    return g;
  };
  function* groups(view: View, dir: Direction, from?: number): Iterable<Row[]> {
    const n = stream.count(view.at);
    if (dir === 'asc') {
      let i = from === undefined ? 0 : stream.firstIndexAt(tl.blockAtOrAfter(from));
      while (i < n) {
        const end = Math.min(n, stream.firstIndexAt(stream.blockOf(i) + 1));
        yield group(i, end);
        i = end;
      }
    } else {
      let i = from === undefined ? n - 1 : Math.min(n, stream.firstIndexAt(tl.blockAtOrAfter(from + 1))) - 1;
      while (i >= 0) {
        const start = stream.firstIndexAt(stream.blockOf(i));
        yield group(start, i + 1);
        i = start - 1;
      }
    }
  }
  return {
    entity,
    ...(seq ? { seq } : {}),
    groups,
    byId: (view, dir, after) => ids.rows(view, dir, after, row),
    get(id, view) {
      const i = indexOfHash(id);
      if (i < 0 || i >= stream.count(view.at)) return undefined;
      const r = row(i);
      return r.id === id ? r : undefined;
    },
  };
}

/** How a bucket table folds the events of one bucket into rows. */
export interface BucketSpec<A> {
  readonly entity: EntityModel;
  /** `date` or `hour`. */
  readonly seq: string;
  /** Bucket length in seconds (86400 or 3600). */
  readonly secs: number;
  readonly stream: EventStream;
  /** Group keys an event contributes to (e.g. its pair), or none. */
  keys(i: number): readonly string[];
  /** A fresh accumulator for a key in a bucket. */
  start(key: string, bucket: number): A;
  /** Adds event `i` to the accumulator. */
  add(acc: A, i: number, key: string): void;
  /** The row of a finished accumulator. */
  finish(acc: A, key: string, bucket: number): Row;
  /** The key and bucket encoded in an id, for lookups. */
  parseId(id: string): { key: string; bucket: number } | undefined;
}

/** A table of day or hour buckets whose rows are sums of that bucket's events, computed when asked and cached. */
export function bucketTable<A>(spec: BucketSpec<A>): Table {
  const tl = spec.stream.tl;
  const cache = new Map<string, Row[]>();
  const bucketOfIndex = (i: number) => Math.floor(tl.ts(spec.stream.blockOf(i)) / spec.secs);
  const rowsOf = (bucket: number, view: View): Row[] => {
    const first = spec.stream.firstIndexAt(tl.blockAtOrAfter(bucket * spec.secs));
    const end = Math.min(
      spec.stream.firstIndexAt(tl.blockAtOrAfter((bucket + 1) * spec.secs)),
      spec.stream.count(view.at),
    );
    const key = `${bucket}:${end}:${view.epoch}`;
    const hit = cache.get(key);
    if (hit) return hit;
    const accs = new Map<string, A>();
    for (let i = first; i < end; i++) {
      for (const k of spec.keys(i)) {
        let acc = accs.get(k);
        if (!acc) accs.set(k, (acc = spec.start(k, bucket)));
        spec.add(acc, i, k);
      }
    }
    const rows = [...accs].map(([k, acc]) => spec.finish(acc, k, bucket));
    if (cache.size >= BUCKET_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(key, rows);
    return rows;
  };
  function* groups(view: View, dir: Direction, from?: number): Iterable<Row[]> {
    const n = spec.stream.count(view.at);
    if (n === 0) return;
    const lo = bucketOfIndex(0);
    const hi = bucketOfIndex(n - 1);
    const start = from === undefined ? (dir === 'asc' ? lo : hi) : Math.floor(from / spec.secs);
    const step = dir === 'asc' ? 1 : -1;
    for (let b = Math.max(lo, Math.min(hi, start)); b >= lo && b <= hi; b += step) {
      const rows = rowsOf(b, view);
      if (rows.length > 0) yield rows;
    }
  }
  return {
    entity: spec.entity,
    seq: spec.seq,
    groups,
    get(id, view) {
      const p = spec.parseId(id);
      if (!p) return undefined;
      return rowsOf(p.bucket, view).find((r) => r.id === id);
    },
  };
}

/** A table that is always empty (entities the upstream never writes). */
export function emptyTable(entity: EntityModel): Table {
  return { entity, groups: () => [], get: () => undefined };
}
