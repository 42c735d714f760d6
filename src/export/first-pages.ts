/**
 * What is new, in one request per route: the first page of every dataset a run continues on a route's deployment, asked
 * in one query with an alias per dataset, all pinned to the route's block. graph-node runs the fields of one query that
 * share a block constraint against one snapshot (graphprotocol/graph-node `graphql/src/runner.rs`; see
 * ../shared/reference/graph-node-semantics.md §1.4), so each alias's rows are the rows its task's own first request would
 * get. `verify`'s `CounterReader.prefetch` reads its counters the same way.
 *
 * The batch is a cache in front of the upstream, never a second way to read: `FirstPages` is a `PageSource` that
 * answers a page request equal to one it asked in a batch (same route, query text and variables) from the batch's
 * answer, once, and sends every other request on. A task whose first page is short is then done without a request of
 * its own; one whose page is full reads on from it. Whatever the batch did not answer, the task asks itself, with its
 * own retries, failover and error messages:
 * - an answer with GraphQL errors, or over the answer budget, is split in halves and each half asked again, so one
 *   dataset that fails does not sink the others; a single dataset that fails is left to its task. A batch of n
 *   datasets makes 1 + 2·⌈log2 n⌉ requests at most, enough to find one failing dataset, not to search the whole tree
 *   when every answer fails; what is left then, its tasks ask;
 * - a failure of the route itself (unreachable, time-out, HTTP status, rate limit) ends the batch at once: its tasks
 *   meet it with their retries and standby routes, and the batch adds one request, not a storm.
 * Each alias's rows are cut from the answer's bytes unparsed (`util/json-members.ts`), and the task's page checker
 * checks them as it checks any page.
 *
 * What the batches hold is bounded (`holdBytes`): every batch is asked before the first task starts, and a catch-up
 * run's first pages are full (a batch of 32 full pages is tens of megabytes). An answer is held until the last of its
 * pages is taken; a batch is not asked once the answers held reach the bound, and an answer that would pass it is let go
 * at once. Either way its tasks ask their first pages themselves, as without a batch: the bound costs requests, never
 * rows.
 */
import pLimit from 'p-limit';
import { UpstreamError } from '../errors.ts';
import type { Answer, Endpoint } from '../upstream/client.ts';
import { arrayLength, objectMembers, type Span, topMembers } from '../util/json-members.ts';
import type { EventLog } from '../util/logger.ts';
import { batchQuery, type FirstAsk, heldIds } from './first-batch.ts';
import { pageQuery } from './queries.ts';
import type { PageSource, Presence, PresenceAt } from './seams.ts';

/** The key of what a batch learnt of ids' presence. */
function presenceKey(at: PresenceAt): string {
  return JSON.stringify([at.endpoint.url, at.dataset, at.root, at.block]);
}

/**
 * A page answer kept from a batch: its rows, a view on the batch's answer (not a copy: the answer is freed once every
 * page of it is taken), written as a page answer of its own when a task takes it; `answer` is what holds that answer.
 */
interface Kept {
  readonly rows: Uint8Array;
  readonly answer: Held;
  /** Fewer rows than a page: the task that takes it reads no further page. */
  readonly short: boolean;
}

/** A batch's answer held for its pages: its size, and how many of its pages no task took yet. */
interface Held {
  readonly bytes: number;
  pages: number;
}

/**
 * The bytes of batch answers a run holds at most before their tasks take them (see the module's header): a few full
 * batches, a small part of what a 512 MiB container leaves the process beside DuckDB.
 */
export const HOLD_BYTES = 32 * 1024 ** 2;

/** Why a batch was not asked, or its answer let go. */
const FULL = 'the first pages held reach their bound; the tasks ask their own';

/** How a page answer begins and ends around its rows: compact, as graph-node writes it (see `check/page-check.ts`). */
const PAGE_HEAD = Buffer.from('{"data":{"rows":');
const PAGE_TAIL = Buffer.from('}}');

/** The failures of an answer's content, which asking fewer datasets may avoid; the others are the route's. */
const SPLIT_KINDS: ReadonlySet<string> = new Set(['graphql', 'garbage']);

/** The key of one page request: its route, query text and variables (in key order). */
function askKey(endpoint: Endpoint, query: string, vars: Record<string, unknown>): string {
  const sorted = Object.fromEntries(Object.entries(vars).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return `${endpoint.url}\n${query}\n${JSON.stringify(sorted)}`;
}

/** The bytes of `span` in `body`, as a view. */
function view(body: Uint8Array, [start, end]: Span): Uint8Array {
  return body.subarray(start, end);
}

/** A source whose first page requests a batch answered already (see the module's header). */
export class FirstPages implements PageSource {
  private readonly kept = new Map<string, Kept>();
  /** What batches learnt of ids' presence, by route, collection and block. */
  private readonly presence = new Map<string, Presence>();
  /** Requests sent by batches of each route and not yet counted by a task. */
  private readonly uncounted = new Map<string, number>();
  /** Bytes of the answers held (see `HOLD_BYTES`). */
  private heldBytes = 0;

  /**
   * `pageSize`: the first page's size; `maxAliases`: datasets asked in one request at most (config `batchDatasets`; the
   * dodoex deployment has 32, and graph-node sets no limit of its own); `holdBytes`: the bytes of answers held at most
   * (`HOLD_BYTES` unless given).
   */
  constructor(
    private readonly source: PageSource,
    private readonly sizes: { readonly pageSize: number; readonly maxAliases: number; readonly holdBytes?: number },
  ) {}

  private get holdBytes(): number {
    return this.sizes.holdBytes ?? HOLD_BYTES;
  }

  private get pageSize(): number {
    return this.sizes.pageSize;
  }

  request<T>(endpoint: Endpoint, query: string, vars: Record<string, unknown>): Promise<Answer<T>> {
    return this.source.request<T>(endpoint, query, vars);
  }

  answerData<T>(endpoint: Endpoint, body: Uint8Array): T {
    return this.source.answerData<T>(endpoint, body);
  }

  /**
   * A page request: from a batch's answer when one asked it (once; `requests` is what the batch cost, counted by the
   * first task of its route that takes a page, 0 for the others), else from the upstream.
   */
  async requestBody(
    endpoint: Endpoint,
    query: string,
    vars: Record<string, unknown>,
  ): Promise<{ body: Uint8Array; bytes: number; requests?: number }> {
    const key = askKey(endpoint, query, vars);
    const hit = this.kept.get(key);
    if (!hit) return this.source.requestBody(endpoint, query, vars);
    this.kept.delete(key);
    if (--hit.answer.pages === 0) this.heldBytes -= hit.answer.bytes;
    const requests = this.uncounted.get(endpoint.url) ?? 0;
    this.uncounted.delete(endpoint.url);
    return { body: Buffer.concat([PAGE_HEAD, hit.rows, PAGE_TAIL]), bytes: hit.rows.byteLength, requests };
  }

  /** What a batch learnt of the presence of a dataset's window rows (see `PageSource.knownPresence`). */
  knownPresence(at: PresenceAt): Presence | undefined {
    return this.presence.get(presenceKey(at));
  }

  /** Page answers kept and not taken yet. */
  get waiting(): number {
    return this.kept.size;
  }

  /**
   * Whether a batch holds the first page of `ask` and it is short: its task reads nothing further of its pass, so it
   * costs the run no request (it may run beside more tasks than the upstream's concurrency allows).
   */
  holdsShort(ask: FirstAsk): boolean {
    return this.kept.get(this.keyOf(ask))?.short === true;
  }

  /** Whether a batch holds the answer of this page request. */
  holds(endpoint: Endpoint, query: string, vars: Record<string, unknown>): boolean {
    return this.kept.has(askKey(endpoint, query, vars));
  }

  /** The key of the page request `ask` foresees. */
  private keyOf(a: FirstAsk): string {
    return askKey(a.endpoint, pageQuery(a.ds, a.root, a.request.shape), { first: this.pageSize, ...a.request.vars });
  }

  /** Bytes of the batch answers held for pages not taken yet. */
  get held(): number {
    return this.heldBytes;
  }

  /**
   * Asks the first pages of `asks`, one batch per route (of `maxAliases` at most), `concurrency` batches at a time.
   * Never throws: what a batch did not answer, its tasks ask themselves.
   */
  async read(
    asks: readonly FirstAsk[],
    opts: { readonly concurrency: number; readonly log: EventLog; readonly signal: AbortSignal },
  ): Promise<void> {
    const byRoute = new Map<string, FirstAsk[]>();
    for (const a of asks) byRoute.set(a.endpoint.url, [...(byRoute.get(a.endpoint.url) ?? []), a]);
    const limit = pLimit(opts.concurrency);
    const batches: FirstAsk[][] = [];
    const most = this.sizes.maxAliases;
    if (most > 0)
      for (const list of byRoute.values())
        for (let i = 0; i < list.length; i += most) batches.push(list.slice(i, i + most));
    await Promise.all(
      batches.map((b) =>
        limit(async () => {
          const stats = { requests: 0, answered: 0, left: 0, failure: undefined as string | undefined };
          if (this.heldBytes >= this.holdBytes) {
            stats.left = b.length;
            stats.failure = FULL;
          }
          // Enough requests to find one failing dataset by halving (two per level), not to search the whole tree: an
          // upstream whose every answer fails costs the batch 11 requests at most, not 63.
          const budget = { left: 1 + 2 * Math.ceil(Math.log2(b.length)) };
          if (!stats.failure) await this.readBatch(b, { signal: opts.signal, budget }, stats);
          const endpoint = b[0]!.endpoint.label;
          opts.log('first-pages', {
            endpoint,
            datasets: b.length,
            answered: stats.answered,
            requests: stats.requests,
            ...(stats.failure ? { left: stats.left, failure: stats.failure } : {}),
          });
        }),
      ),
    );
  }

  /** One batch: asked, and on a failure of its content split in halves (see the module's header). */
  private async readBatch(
    asks: readonly FirstAsk[],
    bounds: { readonly signal: AbortSignal; readonly budget: { left: number } },
    stats: { requests: number; answered: number; left: number; failure: string | undefined },
  ): Promise<void> {
    if (bounds.signal.aborted || !asks.length) return;
    if (bounds.budget.left <= 0) {
      stats.left += asks.length;
      return;
    }
    bounds.budget.left--;
    const endpoint = asks[0]!.endpoint;
    const { query, vars } = batchQuery(asks, this.pageSize);
    let members: Map<string, Uint8Array> | undefined;
    let failure: string;
    let size = 0;
    stats.requests++;
    this.uncounted.set(endpoint.url, (this.uncounted.get(endpoint.url) ?? 0) + 1);
    try {
      const { body } = await this.source.requestBody(endpoint, query, vars);
      size = body.byteLength;
      const top = topMembers(body);
      const data = top?.get('data');
      const spans = top && !top.has('errors') && data ? objectMembers(body, data) : undefined;
      if (spans) members = new Map([...spans].map(([k, span]) => [k, view(body, span)]));
      failure = top?.has('errors') ? 'the answer holds GraphQL errors' : 'the answer is not an object of data';
    } catch (e) {
      if (!(e instanceof UpstreamError) || !SPLIT_KINDS.has(e.kind)) {
        // The route's own failure: every task of the batch meets it on its own, with its retries and standby routes.
        stats.left += asks.length;
        stats.failure = e instanceof Error ? e.message : String(e);
        return;
      }
      failure = e.message;
    }
    const isList = (v: Uint8Array | undefined) => v?.[0] === 0x5b;
    const ok = (i: number, a: FirstAsk) =>
      isList(members!.get(`a${i}`)) && (!a.present?.length || isList(members!.get(`p${i}`)));
    const held = members && asks.every((a, i) => ok(i, a)) ? heldIds(asks, members) : undefined;
    if (members === undefined || held === undefined) {
      if (asks.length === 1) {
        stats.left++;
        stats.failure = failure;
        return;
      }
      const half = Math.ceil(asks.length / 2);
      await this.readBatch(asks.slice(0, half), bounds, stats);
      await this.readBatch(asks.slice(half), bounds, stats);
      return;
    }
    if (this.heldBytes + size > this.holdBytes) {
      // Held, it would pass the bound: let go, its tasks ask their pages themselves.
      stats.left += asks.length;
      stats.failure = FULL;
      return;
    }
    const answer: Held = { bytes: size, pages: asks.length };
    this.heldBytes += size;
    asks.forEach((a, i) => {
      const rows = members.get(`a${i}`)!;
      const key = this.keyOf(a);
      const old = this.kept.get(key);
      if (old && --old.answer.pages === 0) this.heldBytes -= old.answer.bytes;
      const n = arrayLength(rows, this.pageSize);
      this.kept.set(key, { rows, answer, short: n !== undefined && n < this.pageSize });
      stats.answered++;
      // An empty list of ids was not asked: none of them is held.
      if (a.present)
        this.presence.set(
          presenceKey({ endpoint, dataset: a.ds.name, root: a.root, block: Number(a.request.vars.block) }),
          { asked: a.present, held: held[i] ?? new Set() },
        );
    });
  }
}
