/**
 * Where page answers are checked and kept (see `page-check.ts`): on the calling thread, or in the page worker, a thread
 * of its own. An export sends one request after another from the main thread, and drives DuckDB from it; parsing and
 * checking a page costs several milliseconds there, and with the main thread busy, every DuckDB statement waited for
 * it (docs/benchmarks.md: most of a backfill's time).
 */
import type { Worker } from 'node:worker_threads';
import type { Dataset } from '../../catalog/catalog.ts';
import { type GarbageAt, GarbageError } from '../../errors.ts';
import { startWorker as startWorkerOf } from '../../util/worker-start.ts';
import { type CheckedPage, checkPageAnswer, type PageToCheck } from './page-check.ts';

/** What checking an answer gave: the page, its rows kept; or, for an answer that is not a page of rows alone, its body. */
export type Checked = { readonly page: CheckedPage } | { readonly body: Uint8Array };

/** Checks page answers; `close` ends whatever it started. */
export interface PageChecker {
  /** The page checked and its rows kept in `page.file`, or the answer's body back when it is not a page of rows alone. */
  check(page: PageToCheck): Promise<Checked>;
  close(): Promise<void>;
}

/** A page to check, as the page worker receives it: the body's bytes are moved, not copied. */
export interface CheckRequest {
  readonly id: number;
  readonly dataset: string;
  /** The dataset itself, the first time the worker is asked about it. */
  readonly ds?: Dataset;
  readonly chainId: number;
  readonly body: ArrayBuffer;
  readonly file: string;
}

/** The page worker's answer to one request: the checked page, a value of the wrong type, or another failure. */
export type CheckReply =
  | { readonly id: number; readonly page: CheckedPage }
  | { readonly id: number; readonly body: ArrayBuffer }
  | { readonly id: number; readonly garbage: { at: GarbageAt; detail: string; hint: string } }
  | { readonly id: number; readonly error: string };

/** Checks pages on the calling thread: for tests of a task on in-memory seams, and as the worker's own code. */
export class InlinePageChecker implements PageChecker {
  async check(page: PageToCheck): Promise<Checked> {
    const checked = checkPageAnswer(page);
    return checked ? { page: checked } : { body: page.body };
  }

  async close(): Promise<void> {}
}

/**
 * The page worker's young generation, in MB (V8's default lets it grow to 48): a page's objects (3-4 MB for 1,000
 * swaps) die once it is checked, so a small one holds them. A backfill of 501,101 swaps peaked at 569-571 MB against
 * 599-642 MB, in the same time (two runs each, replayed pages).
 */
const WORKER_YOUNG_MB = 8;

/** Starts the page worker (`util/worker-start.ts`). */
function startWorker(): Worker {
  return startWorkerOf(
    { script: new URL('./page-worker.js', import.meta.url), source: new URL('./page-worker.ts', import.meta.url) },
    { resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB } },
  );
}

/**
 * The bytes of a body as a whole ArrayBuffer of their own, which can be moved to the worker. A body that is a view on a
 * larger buffer (a small Buffer lives in Node's shared pool) is copied: the worker reads a buffer from its start. (Node 20
 * marks its pool as not transferable and copies all 8 KiB of it instead of moving it, so the worker would read the pool's
 * other Buffers before the body; a buffer of another owner would be moved, emptying every other view on it.)
 */
function movable(body: Uint8Array): ArrayBuffer {
  const { buffer } = body;
  if (buffer instanceof ArrayBuffer && body.byteOffset === 0 && body.byteLength === buffer.byteLength) return buffer;
  return new Uint8Array(body).buffer;
}

/**
 * Checks pages in one worker thread, started at the first page. A worker that dies fails the pages it held (their
 * tasks fail, their checkpoints kept) and the next page starts another.
 */
export class WorkerPageChecker implements PageChecker {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (c: Checked) => void; reject: (e: Error) => void }>();
  /** Datasets the running worker has been sent. */
  private readonly sent = new Set<string>();

  check(page: PageToCheck): Promise<Checked> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    const { ds } = page;
    const body = movable(page.body);
    const request: CheckRequest = {
      id,
      dataset: ds.name,
      chainId: page.chainId,
      body,
      file: page.file,
      ...(this.sent.has(ds.name) ? {} : { ds }),
    };
    this.sent.add(ds.name);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // Held only while it has pages: a run that ends never waits for an idle worker.
      worker.ref();
      worker.postMessage(request, [body]);
    });
  }

  private start(): Worker {
    const worker = startWorker();
    worker.on('message', (r: CheckReply) => this.answered(r));
    worker.on('error', (e) => this.failAll(worker, new Error(`the page worker failed: ${e.message}`, { cause: e })));
    worker.on('exit', (code) => this.failAll(worker, new Error(`the page worker stopped (exit code ${code})`)));
    worker.unref();
    this.worker = worker;
    this.sent.clear();
    return worker;
  }

  private answered(r: CheckReply): void {
    const p = this.pending.get(r.id);
    if (!p) return;
    this.pending.delete(r.id);
    if (this.pending.size === 0) this.worker?.unref();
    if ('page' in r) p.resolve({ page: r.page });
    else if ('body' in r) p.resolve({ body: new Uint8Array(r.body) });
    else if ('garbage' in r) p.reject(new GarbageError(r.garbage.at, r.garbage.detail, r.garbage.hint));
    else p.reject(new Error(r.error));
  }

  private failAll(worker: Worker, e: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }

  /** Stops the worker; pages it still held fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.failAll(worker, new Error('the page worker was stopped'));
    await worker.terminate();
  }
}
