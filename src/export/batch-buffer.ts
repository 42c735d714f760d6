/**
 * The rows a task has read and not yet committed: pages kept as the upstream sent them (in the sink's files), or,
 * once an id repeats (an upstream defect) and for answers the page checker did not take, rows mapped here, one per id.
 * Never both at once.
 */
import type { Dataset } from '../catalog/catalog.ts';
import type { KeptPage } from '../store/batch.ts';
import { mapPage } from './mapper.ts';
import type { FetchedPage } from './routing/routed-source.ts';
import type { BatchSink } from './seams.ts';

/** What a commit takes from the buffer. */
export interface Drained {
  readonly rows: Record<string, unknown>[];
  readonly pages: KeptPage[];
  readonly count: number;
}

export class BatchBuffer {
  private pages: KeptPage[] = [];
  private rows: Record<string, unknown>[] = [];
  /** Rows buffered (in pages or mapped). */
  private count = 0;
  /** Each buffered id, with its row's position among the mapped rows (-1 while it is in a kept page). */
  private ids = new Map<string, number>();

  /** `onRepeated`: told of the ids of rows the upstream sent twice. */
  constructor(
    private readonly of: {
      readonly ds: Dataset;
      readonly chainId: number;
      readonly sink: Pick<BatchSink, 'reread' | 'drop'>;
      readonly onRepeated: (ids: readonly string[]) => void;
    },
  ) {}

  /** Rows buffered. */
  get size(): number {
    return this.count;
  }

  /**
   * Adds a fetched page: a kept page as it is, unless an id of it is buffered already or repeats within it; then, and
   * for answers mapped here, as mapped rows.
   */
  take(page: FetchedPage): void {
    const { kept, ids } = page;
    if (kept && ids && this.rows.length === 0 && this.unique(ids)) {
      for (const id of ids) this.ids.set(id, -1);
      this.pages.push(kept);
      this.count += page.count;
      return;
    }
    let rows = page.rows ?? [];
    if (kept) {
      // The buffer turns to mapped rows, so that the newer of two rows with one id replaces the other.
      this.unkeep();
      rows = JSON.parse(this.of.sink.reread(kept)) as unknown[];
      this.of.sink.drop([kept]);
    }
    this.takeRows(rows);
  }

  /** Maps rows and adds them; a row whose id is already buffered replaces it when it is newer. */
  takeRows(items: unknown[]): void {
    const { ds, chainId } = this.of;
    const page = mapPage(ds, chainId, items);
    const repeated: string[] = [];
    for (const row of page.rows) {
      const id = row.id as string;
      const at = this.ids.get(id);
      if (at === undefined) {
        this.ids.set(id, this.rows.length);
        this.rows.push(row);
        this.count++;
        continue;
      }
      repeated.push(id);
      if (newer(ds, row, this.rows[at]!)) this.rows[at] = row;
    }
    if (repeated.length) this.of.onRepeated(repeated);
  }

  /** Forgets a page fetched and not taken (its kept file). */
  forget(page: FetchedPage): void {
    if (page.kept) this.of.sink.drop([page.kept]);
  }

  /** Empties the buffer for a commit, which takes what it held. */
  drain(): Drained {
    const out = { rows: this.rows, pages: this.pages, count: this.count };
    this.rows = [];
    this.pages = [];
    this.count = 0;
    this.ids = new Map();
    return out;
  }

  /** Forgets what the buffer holds (the task failed or stopped): its kept pages are dropped. */
  discard(): void {
    this.of.sink.drop(this.drain().pages);
  }

  /** Whether no id of a checked page repeats one of the page or of the buffer. */
  private unique(ids: readonly string[]): boolean {
    const seen = new Set<string>();
    for (const id of ids) {
      if (this.ids.has(id) || seen.has(id)) return false;
      seen.add(id);
    }
    return true;
  }

  /** Turns the kept pages into mapped rows, in order, so that a repeated id can replace its row. */
  private unkeep(): void {
    const { ds, chainId, sink } = this.of;
    const pages = this.pages;
    this.pages = [];
    for (const p of pages)
      for (const row of mapPage(ds, chainId, JSON.parse(sink.reread(p)) as unknown[]).rows) {
        this.ids.set(row.id as string, this.rows.length);
        this.rows.push(row);
      }
    sink.drop(pages);
  }
}

/**
 * Whether `a` is newer than `b`, two rows with one id: the later `updatedAt` for mutable entities, else the one served
 * last (a null `updatedAt` is older than any).
 */
function newer(ds: Dataset, a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  if (ds.kind !== 'mutable') return true;
  const col = ds.columns.find((c) => c.field === ds.seq)!.column;
  const [x, y] = [a[col], b[col]] as [string | null, string | null];
  if (y === null) return true;
  return x !== null && BigInt(x) >= BigInt(y);
}
