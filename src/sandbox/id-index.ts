/**
 * An event table's rows in id order, so that an id-ordered page seeks instead of generating the whole table (graph-node
 * answers those from its id index; 10 million generated rows take about a minute). Built on first use: the first word
 * of every event's id, radix-sorted with the event index. Events added or rewritten since the build are sorted per
 * query until there are enough of them to rebuild.
 */
import { compareBytes } from './filter.ts';
import type { Direction, Row, View } from './table.ts';
import type { EventStream } from './timeline.ts';

/** Events past the index (new or rewritten by a reorganization) sorted per query; past this many the index is rebuilt. */
const TAIL_LIMIT = 50_000;

/** Event indexes ordered by the first word of their id; `keys[k]` is the word of event `idx[k]`. */
interface Sorted {
  readonly keys: Uint32Array;
  readonly idx: Uint32Array;
}

/** Sorts events `from` to `to` (exclusive) by word: a two-pass LSD radix sort on 16-bit digits, stable. */
function sortByWord(from: number, to: number, word: (i: number) => number): Sorted {
  const n = Math.max(0, to - from);
  let keys = new Uint32Array(n);
  let idx = new Uint32Array(n);
  for (let k = 0; k < n; k++) {
    keys[k] = word(from + k);
    idx[k] = from + k;
  }
  let keys2 = new Uint32Array(n);
  let idx2 = new Uint32Array(n);
  for (const shift of [0, 16]) {
    const start = new Uint32Array(65_537);
    for (let k = 0; k < n; k++) start[((keys[k]! >>> shift) & 0xffff) + 1]!++;
    for (let d = 0; d < 65_536; d++) start[d + 1]! += start[d]!;
    for (let k = 0; k < n; k++) {
      const at = start[(keys[k]! >>> shift) & 0xffff]!++;
      keys2[at] = keys[k]!;
      idx2[at] = idx[k]!;
    }
    [keys, keys2] = [keys2, keys];
    [idx, idx2] = [idx2, idx];
  }
  return { keys, idx };
}

/**
 * The first word of a bound on ids, when it starts with one. Ids whose first word is below it (asc) or above it (desc)
 * are outside the bound; those with the same word are left to the filter.
 */
function boundWord(bound: string | undefined): number | undefined {
  if (bound === undefined || !/^0x[0-9a-f]{8}/.test(bound)) return undefined;
  return parseInt(bound.slice(2, 10), 16);
}

/** First position whose key is at least `w` (asc), or last position whose key is at most `w` (desc). */
function seek(keys: Uint32Array, w: number | undefined, dir: Direction): number {
  if (w === undefined) return dir === 'asc' ? 0 : keys.length - 1;
  // The first position whose key is above the bound: `w - 1` for asc (at least `w`), `w` for desc (then one back).
  const above = dir === 'asc' ? w - 1 : w;
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! <= above) lo = mid + 1;
    else hi = mid;
  }
  return dir === 'asc' ? lo : lo - 1;
}

/** The id index of one event table. */
export class IdIndex {
  private main: Sorted | undefined;
  private mainEpoch = 0;
  private mainCount = 0;
  private tail: { from: number; to: number; epoch: number; sorted: Sorted } | undefined;

  /** `word` gives the first word of event `i`'s id (its hash), as an unsigned 32-bit number. */
  constructor(
    private readonly stream: EventStream,
    private readonly word: (i: number) => number,
  ) {}

  /** Events below this index are placed right by the main index: built then, and not rewritten since. */
  private validCount(): number {
    const rewritten = this.stream.tl.rewrittenSince(this.mainEpoch);
    return rewritten === undefined ? this.mainCount : Math.min(this.mainCount, this.stream.firstIndexAt(rewritten));
  }

  /** The main index and the sorted events past it, rebuilding the index when too much has changed. */
  private sources(): { main: Sorted; valid: number; tail: Sorted } {
    const tl = this.stream.tl;
    const head = this.stream.count(tl.head);
    if (!this.main || head - this.validCount() > TAIL_LIMIT) {
      this.main = sortByWord(0, head, this.word);
      this.mainEpoch = tl.epoch;
      this.mainCount = head;
      this.tail = undefined;
    }
    const valid = this.validCount();
    if (!this.tail || this.tail.from !== valid || this.tail.to !== head || this.tail.epoch !== tl.epoch) {
      this.tail = { from: valid, to: head, epoch: tl.epoch, sorted: sortByWord(valid, head, this.word) };
    }
    return { main: this.main, valid, tail: this.tail.sorted };
  }

  /** Rows in id order from the bound on (see `Table.byId`), as of the view; `row` makes the row of event `i`. */
  *rows(view: View, dir: Direction, after: string | undefined, row: (i: number) => Row): Iterable<Row> {
    const { main, valid, tail } = this.sources();
    const n = this.stream.count(view.at);
    const w = boundWord(after);
    const step = dir === 'asc' ? 1 : -1;
    let a = seek(main.keys, w, dir);
    let b = seek(tail.keys, w, dir);
    const inA = () => a >= 0 && a < main.keys.length;
    const inB = () => b >= 0 && b < tail.keys.length;
    const sign = dir === 'asc' ? 1 : -1;
    const run: Row[] = [];
    while (inA() || inB()) {
      // The next word in `dir` over both sources; every event with that word is one run, sorted by the whole id.
      const key = !inB()
        ? main.keys[a]!
        : !inA()
          ? tail.keys[b]!
          : sign * (main.keys[a]! - tail.keys[b]!) <= 0
            ? main.keys[a]!
            : tail.keys[b]!;
      run.length = 0;
      for (; inA() && main.keys[a] === key; a += step) {
        const i = main.idx[a]!;
        if (i < valid && i < n) run.push(row(i));
      }
      for (; inB() && tail.keys[b] === key; b += step) {
        const i = tail.idx[b]!;
        if (i < n) run.push(row(i));
      }
      if (run.length > 1) run.sort((x, y) => sign * compareBytes(x.id, y.id));
      yield* run;
    }
  }
}
