/**
 * In-memory fakes of a task's seams (see src/export/seams.ts), for unit tests of `runTask` and the paginators: a
 * subgraph that answers the page queries from a list of rows, and a sink that applies batches and moves checkpoints
 * by compare-and-set as the warehouse does. Both are written from the semantics of graph-node and of the design, not
 * from the exporter's code: the subgraph reads the query's filter, not the paginator's intent.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Column, CursorKind, Dataset } from '../../src/catalog/catalog.ts';
import { ConcurrentWriterError, UpstreamError } from '../../src/errors.ts';
import { InlinePageChecker } from '../../src/export/check/page-check-runner.ts';
import type { BatchSink, CheckpointReader, PageSource, TaskDeps } from '../../src/export/seams.ts';
import type { Task, TaskPin } from '../../src/export/task.ts';
import type { Batch, KeptPage, Written } from '../../src/store/batch.ts';
import type { Checkpoint, ShardCheckpoint } from '../../src/store/checkpoint-store.ts';
import type { Answer, Endpoint } from '../../src/upstream/client.ts';

/** One upstream entity of the fake subgraph: `seq` is its keyset field (null allowed), `changed` the block it last changed at. */
export interface FakeRow {
  id: string;
  seq: string | number | null;
  value: string;
  changed: number;
}

const col = (field: string, cls: Column['cls'], nullable = false): Column => ({
  field,
  column: field,
  cls,
  nullable,
  select: field,
});

/** A dataset of `kind` with an id, a keyset field and one value. */
export function fakeDataset(kind: CursorKind): Dataset {
  const seq = kind === 'bucket' ? 'date' : kind === 'mutable' ? 'updatedAt' : 'timestamp';
  const seqCol = kind === 'bucket' ? col(seq, 'int') : col(seq, 'bigint', kind === 'mutable');
  const keyed = kind === 'event' || kind === 'bucket' || kind === 'mutable';
  return {
    name: `fake.${kind}`,
    schema: 'fake',
    entity: 'Fake',
    table: `fake.${kind}`,
    kind,
    ...(keyed ? { seq, seqType: kind === 'bucket' ? ('Int' as const) : ('BigInt' as const) } : {}),
    columns: [col('id', 'text'), ...(keyed ? [seqCol] : []), col('value', 'text')],
  };
}

/** One page of the fake liquidity list. */
export interface ListAnswer {
  totalCount: number | null;
  currentPage: number;
  lqList: ({ id: string; value: string } | null)[] | null;
}

/** The row the fake subgraph serves for an entity of `ds`. */
function served(ds: Dataset, r: FakeRow): Record<string, unknown> {
  if (!ds.seq) return { id: r.id, value: r.value };
  const seq = r.seq === null ? null : ds.seqType === 'Int' ? Number(r.seq) : String(r.seq);
  return { id: r.id, [ds.seq]: seq, value: r.value };
}

const cmpId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A row's fields in the order of their names, so that two rows compare by content. */
const sortKeys = (r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).sort(([a], [b]) => cmpId(a, b)));

/**
 * A subgraph of one entity: answers the page queries (by id, by keyset, by `_change_block`, the liquidity list) as
 * graph-node would, reading the filter from the query text. `failures` are thrown, one per request, before any page.
 */
export class FakeSubgraph implements PageSource {
  rows: FakeRow[] = [];
  /** The `first` of every page request, in order. */
  readonly firsts: number[] = [];
  /** Errors thrown by the next requests, one each. */
  readonly failures: Error[] = [];
  /** Ids served twice in the next page (an upstream defect). */
  repeatNext: string[] = [];
  /** Other versions of rows, each served right after the row of its id in the next page (an upstream defect). */
  staleNext = new Map<string, FakeRow>();
  /** Calls made (page requests, failed ones included). */
  requests = 0;
  /** Makes the liquidity list answer a `totalCount` this much larger than the pools it lists. */
  listSurplus = 0;
  /** Reshapes the liquidity list's answer to a page (nulls where the real types allow them). */
  listShape: ((page: number, answer: ListAnswer) => unknown) | undefined;
  /** The variables of every request, in order. */
  readonly asked: Record<string, unknown>[] = [];
  /** Whether page answers are written compactly, as graph-node writes them (else with white space). */
  compact = true;
  /** An `extensions` entry to send beside each answer's data (as the GraphQL spec allows), or none. */
  extensions: Record<string, unknown> | undefined;
  /** While set, requests wait for it before they are answered (an upstream slow to answer). */
  gate: Promise<void> | undefined;

  constructor(readonly ds: Dataset) {}

  async request<T>(_endpoint: Endpoint, query: string, v: Record<string, unknown>): Promise<Answer<T>> {
    await this.gate;
    const data = this.answer(query, v);
    return { data: data as T, bytes: Buffer.byteLength(JSON.stringify({ data })) };
  }

  async requestBody(
    _endpoint: Endpoint,
    query: string,
    v: Record<string, unknown>,
  ): Promise<{ body: Uint8Array; bytes: number }> {
    await this.gate;
    const data = this.answer(query, v);
    const answer = this.extensions ? { data, extensions: this.extensions } : { data };
    const body = Buffer.from(this.compact ? JSON.stringify(answer) : JSON.stringify(answer, null, 1));
    return { body, bytes: body.byteLength };
  }

  answerData<T>(_endpoint: Endpoint, body: Uint8Array): T {
    return (JSON.parse(Buffer.from(body).toString('utf8')) as { data: T }).data;
  }

  /** The data of one answer (a request counted, and failed if a failure is queued). */
  private answer(query: string, v: Record<string, unknown>): unknown {
    this.requests++;
    this.asked.push(v);
    const failure = this.failures.shift();
    if (failure) throw failure;
    return query.includes('liquidity_list') ? this.listPage(v) : { rows: this.page(query, v) };
  }

  private page(query: string, v: Record<string, unknown>): Record<string, unknown>[] {
    const first = Number(v.first);
    this.firsts.push(first);
    const seqOf = (r: FakeRow) => (r.seq === null ? null : BigInt(r.seq));
    let rows: FakeRow[];
    if (query.includes('id_in:')) {
      const asked = new Set(v.ids as string[]);
      rows = this.rows.filter((r) => asked.has(r.id));
    } else if (query.includes('orderBy: id,')) {
      rows = this.rows.filter((r) => r.id > String(v.id));
      if (query.includes('_change_block')) rows = rows.filter((r) => r.changed >= Number(v.since));
      if (this.ds.seq && query.includes(`${this.ds.seq}: null`)) rows = rows.filter((r) => r.seq === null);
      rows.sort((a, b) => cmpId(a.id, b.id));
    } else {
      // graph-node: a comparison with a null never matches, so keyset filters skip null keys.
      rows = this.rows.filter((r) => r.seq !== null);
      if (v.from !== undefined) rows = rows.filter((r) => seqOf(r)! >= BigInt(v.from as string));
      if (v.seq !== undefined) {
        const [s, id] = [BigInt(v.seq as string), String(v.id)];
        rows = rows.filter((r) => seqOf(r)! > s || (seqOf(r) === s && r.id > id));
      }
      if (v.to !== undefined) rows = rows.filter((r) => seqOf(r)! < BigInt(v.to as string));
      rows.sort((a, b) => (seqOf(a)! < seqOf(b)! ? -1 : seqOf(a)! > seqOf(b)! ? 1 : cmpId(a.id, b.id)));
    }
    // A repeated id comes right after itself, so the page's order (and its last row) stays the subgraph's.
    const page = rows.slice(0, first).flatMap((r) => {
      const other = this.staleNext.get(r.id);
      return (this.repeatNext.includes(r.id) ? [r, r] : other ? [r, other] : [r]).map((x) => served(this.ds, x));
    });
    this.repeatNext = [];
    this.staleNext.clear();
    return page;
  }

  private listPage(v: Record<string, unknown>): unknown {
    const where = v.where as { currentPage: number; pageSize: number };
    const all = [...this.rows].sort((a, b) => cmpId(a.id, b.id));
    const lqList = all
      .slice((where.currentPage - 1) * where.pageSize, where.currentPage * where.pageSize)
      .map((r) => ({ id: r.id, value: r.value }));
    const answer: ListAnswer = { totalCount: all.length + this.listSurplus, currentPage: where.currentPage, lqList };
    return { liquidity_list: this.listShape ? this.listShape(where.currentPage, answer) : answer };
  }
}

/** A stored row: the mapped row and the block of the batch that wrote it. */
type Stored = Record<string, unknown> & { id: string };

/**
 * The warehouse side: one table of `ds` for one chain, snapshots kept per block, and checkpoints moved by
 * compare-and-set in the same step as the rows (all or nothing). `failAt` makes the nth write (1-based) throw.
 */
export class FakeWarehouse implements BatchSink, CheckpointReader {
  readonly table = new Map<string, Stored>();
  /** Snapshot rows by block. */
  readonly snapshots = new Map<number, Stored[]>();
  readonly checkpoints = new Map<string, string>();
  readonly shardCheckpoints = new Map<number, { shards: number; cursor: string }>();
  readonly batches: Batch[] = [];
  /** The folder of pages kept for later batches (made at the first). */
  private keptDir: string | undefined;
  /** The block and run that last wrote each stored row. */
  readonly readAt = new Map<string, { block: number; runId: string }>();
  failAt: number | undefined;
  writes = 0;

  constructor(readonly ds: Dataset) {}

  async get(_chainId: number, dataset: string): Promise<Checkpoint | undefined> {
    const cursor = this.checkpoints.get(dataset);
    return cursor === undefined ? undefined : { cursor, block: null };
  }

  async shards(): Promise<ShardCheckpoint[]> {
    return [...this.shardCheckpoints].sort(([a], [b]) => a - b).map(([shard, s]) => ({ shard, ...s }));
  }

  async idsReadSince(_chainId: number, _ds: Dataset, at: { from: number; exceptRun: string }): Promise<string[]> {
    // As the warehouse does: DuckDB cannot bind an undefined block ("Cannot create values of type ANY").
    if (typeof at.from !== 'number') throw new Error(`idsReadSince: no block to read since (${String(at.from)})`);
    return [...this.readAt]
      .filter(([id, r]) => this.table.has(id) && r.block >= at.from && r.runId !== at.exceptRun)
      .map(([id]) => id)
      .sort(cmpId);
  }

  pageFile(): string {
    this.keptDir ??= mkdtempSync(join(tmpdir(), 'fake-pages-'));
    return join(this.keptDir, `page-${randomUUID()}.json`);
  }

  reread(page: KeptPage): string {
    return readFileSync(page.file, 'utf8');
  }

  drop(pages: readonly KeptPage[]): void {
    for (const p of pages) rmSync(p.file);
  }

  /** Pages kept and not yet taken by a batch nor dropped. */
  keptPages(): string[] {
    return this.keptDir ? readdirSync(this.keptDir) : [];
  }

  /**
   * A batch's rows as the table holds them: its mapped rows, or its kept pages' entities with references to their ids
   * (the fake datasets have no other kind of field to turn).
   */
  private rowsOf(b: Batch): Record<string, unknown>[] {
    if (b.pages.length && b.rows.length) throw new Error('a batch holds both pages and mapped rows');
    const fromPages = b.pages.flatMap((p) => JSON.parse(this.reread(p)) as Record<string, unknown>[]);
    this.drop(b.pages);
    const rows = b.pages.length ? fromPages : [...b.rows];
    if (rows.length !== b.count) throw new Error(`a batch of ${rows.length} rows says it holds ${b.count}`);
    return rows;
  }

  async write(b: Batch): Promise<Written> {
    this.writes++;
    if (this.writes === this.failAt) {
      this.drop(b.pages);
      throw new Error(`the disk said no (write ${this.writes})`);
    }
    const rows = this.rowsOf(b);
    const shard = b.checkpoint.shard;
    const current = shard ? this.shardCheckpoints.get(shard.shard)?.cursor : this.checkpoints.get(b.ds.name);
    if ((current ?? null) !== b.checkpoint.prev) throw new ConcurrentWriterError(b.ds.name, b.chainId);
    const seqCol = b.ds.seq;
    const key = (r: Stored) => BigInt(String(r[seqCol!]));
    const r = b.replace;
    if (r.kind === 'from') for (const [id, row] of this.table) if (key(row) >= BigInt(r.from)) this.table.delete(id);
    if (r.kind === 'gone') for (const id of r.ids) this.table.delete(id);
    if (r.kind === 'range')
      for (const [id, row] of this.table)
        if (key(row) >= BigInt(r.from) && key(row) < BigInt(r.to)) this.table.delete(id);
    const replacedIds: string[] = [];
    if (r.kind === 'snapshot')
      this.snapshots.set(
        b.block!,
        rows.map((x) => ({ ...x }) as Stored),
      );
    else {
      const events = b.ds.kind === 'event' || b.ds.kind === 'bucket';
      for (const row of rows) {
        const id = String(row.id);
        // As DuckDB would: only an event or bucket batch replaces stored rows of its ids unasked (the sink's check of
        // repeated ids); any other batch must say so with 'ids', or the table holds the id twice.
        if (this.table.has(id) && !events && r.kind !== 'ids')
          throw new Error(`${b.ds.name}: id ${id} is stored already and the batch does not replace its ids`);
        if (this.table.has(id) && r.kind !== 'ids') replacedIds.push(id);
        // As the design says of a re-read: a row equal to the stored one is left as it is, with the block and run
        // that wrote it.
        const stored = this.table.get(id);
        if (stored && JSON.stringify(sortKeys(stored)) === JSON.stringify(sortKeys(row))) continue;
        this.table.set(id, { ...row } as Stored);
        this.readAt.set(id, { block: b.block!, runId: b.runId });
      }
    }
    if (shard) this.shardCheckpoints.set(shard.shard, { shards: shard.shards, cursor: b.checkpoint.next });
    else this.checkpoints.set(b.ds.name, b.checkpoint.next);
    if (b.mergeShards) this.shardCheckpoints.clear();
    this.batches.push(b);
    return { rows: rows.length, replacedIds };
  }

  /** The stored rows as the fake subgraph serves them, by id. */
  rowsById(): Map<string, Record<string, unknown>> {
    return new Map([...this.table].sort(([a], [b]) => cmpId(a, b)));
  }
}

/** The rows a subgraph holds, as a warehouse should hold them after an exact export, by id. */
export function expectedRows(ds: Dataset, rows: readonly FakeRow[]): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const r of [...rows].sort((a, b) => cmpId(a.id, b.id))) {
    const seq = ds.seq
      ? { [ds.seq]: r.seq === null ? null : ds.seqType === 'Int' ? Number(r.seq) : String(r.seq) }
      : {};
    out.set(r.id, { id: r.id, ...seq, value: r.value });
  }
  return out;
}

/** Settings of a fake task. */
export interface FakeTaskOptions {
  readonly pageSize?: number;
  readonly batchRows?: number;
  readonly shards?: number;
  readonly reorgWindowSecs?: number;
  readonly maxAttempts?: number;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  readonly onPage?: TaskDeps['onPage'];
}

/** Runs made so far: each gets its own id. */
let runs = 0;

/** A line a fake task logged, with its level (undefined: the logger's default, info). */
export interface FakeEvent {
  readonly event: string;
  readonly fields: Record<string, unknown>;
  readonly level?: string | undefined;
}

/** A task of `ds` on chain 56 with the fakes as its seams; `events` collects what it logs. */
export function fakeTask(
  source: FakeSubgraph,
  sink: FakeWarehouse,
  opts: FakeTaskOptions = {},
): { task: Task; deps: TaskDeps; events: FakeEvent[] } {
  const events: FakeEvent[] = [];
  const endpoint: Endpoint = { url: 'http://127.0.0.1:1/fake', label: 'fake', host: '127.0.0.1:1' } as Endpoint;
  const deps: TaskDeps = {
    config: {
      pageSize: opts.pageSize ?? 100,
      batchRows: opts.batchRows ?? 250,
      shards: opts.shards ?? 1,
      maxAttempts: opts.maxAttempts ?? 3,
      timeoutMs: opts.timeoutMs ?? 30_000,
      reorgWindowSecs: opts.reorgWindowSecs ?? 0,
      listPoolTypes: ['CLASSICAL'],
      confirmations: 0,
    },
    source,
    checker: new InlinePageChecker(),
    sink,
    checkpoints: sink,
    runId: `run-${++runs}`,
    signal: opts.signal ?? new AbortController().signal,
    log: (event, fields, level) => events.push({ event, fields, level }),
    ...(opts.onPage ? { onPage: opts.onPage } : {}),
  };
  return { task: { chainId: 56, ds: source.ds, endpoint, routes: [endpoint] }, deps, events };
}

/** A pin at `block`, whose timestamp is `time`. */
export function pinAt(block: number, time: number, changeBlock = true): TaskPin {
  return { block: { number: block, timestamp: time }, root: 'fakes', changeBlock };
}

/** A time-out from the upstream, as the client classifies it. */
export function timeout(): UpstreamError {
  return new UpstreamError('no answer within 10 ms from fake', { kind: 'timeout', retryable: true });
}
