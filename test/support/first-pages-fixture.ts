/**
 * What the tests of a run's first pages (test/unit/first-pages*.test.ts) share: rows new to a later run, a source
 * that records its requests, a batch upstream built on the fakes of test/support/task-fakes.ts, tasks read up to
 * block 100, four routes' asks, and a batched read with the lines it logged.
 */

import { expect } from 'vitest';
import type { CursorKind } from '../../src/catalog/catalog.ts';
import type { UpstreamError } from '../../src/errors.ts';
import { runTask } from '../../src/export/by-kind.ts';
import type { FirstAsk } from '../../src/export/first-batch.ts';
import { FirstPages } from '../../src/export/first-pages.ts';
import { firstRequest, windowPresenceFrom } from '../../src/export/paginate/first-request.ts';
import { selection } from '../../src/export/queries.ts';
import type { PageSource } from '../../src/export/seams.ts';
import type { Cursor } from '../../src/export/task-run.ts';
import type { Answer, Endpoint } from '../../src/upstream/client.ts';
import { objectMembers, topMembers } from '../../src/util/json-members.ts';
import { type FakeRow, FakeSubgraph, FakeWarehouse, fakeDataset, fakeTask, pinAt } from './task-fakes.ts';

export const ENDPOINT = { url: 'http://127.0.0.1:1/fake', label: 'fake', host: '127.0.0.1:1' } as Endpoint;

/** `n` rows whose keys and change blocks grow with `i`: the later ones are new to a run at a later block. */
export function rowsOf(n: number): FakeRow[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `0x${(i * 7919).toString(16).padStart(6, '0')}`,
    seq: 1000 + i * 10,
    value: `v${i}`,
    changed: 1 + i,
  }));
}

/** The members of an answer's `data`, each as its text (undefined when it is no such answer). */
export function dataMembers(text: string): Map<string, string> | undefined {
  const body = Buffer.from(text);
  const data = topMembers(body)?.get('data');
  const members = data && objectMembers(body, data);
  return members && new Map([...members].map(([k, [a, b]]) => [k, body.subarray(a, b).toString('utf8')]));
}

/** A source that records every page request it passes on. */
export class Recording implements PageSource {
  readonly asked: { query: string; vars: Record<string, unknown> }[] = [];
  constructor(readonly inner: PageSource) {}
  request<T>(e: Endpoint, q: string, v: Record<string, unknown>): Promise<Answer<T>> {
    return this.inner.request<T>(e, q, v);
  }
  requestBody(e: Endpoint, q: string, v: Record<string, unknown>) {
    this.asked.push({ query: q, vars: v });
    return this.inner.requestBody(e, q, v);
  }
  answerData<T>(e: Endpoint, body: Uint8Array): T {
    return this.inner.answerData<T>(e, body);
  }
}

/**
 * An upstream of several fake subgraphs (one per dataset, by its place in the batch) that answers a batched query as
 * graph-node does: every alias from one snapshot, or, when any alias fails, `errors` and no `data`. Each alias is
 * answered by its subgraph from the alias's own field text and variables, so the fake knows nothing of the batcher.
 */
export class BatchUpstream implements PageSource {
  requests = 0;
  /** Subgraphs whose every field fails (a field the deployment lacks). */
  readonly failing = new Set<FakeSubgraph>();
  /** A failure of the route itself, thrown by every request. */
  down: UpstreamError | undefined;
  /** A hostile upstream: the text that stands in a batch's answer for a subgraph's page (`a`) or presence (`p`) alias. */
  readonly hostile = new Map<FakeSubgraph, { a?: string; p?: string }>();
  /** A hostile upstream: members written after `data` in a batch's answer (graph-node sends `data` or `errors`). */
  besideData = '';
  /** `subgraphs`: one per dataset, each selecting other fields. */
  constructor(readonly subgraphs: readonly FakeSubgraph[]) {}

  request<T>(e: Endpoint, q: string, v: Record<string, unknown>): Promise<Answer<T>> {
    return this.subgraphOf(q.slice(0, -2))!.request<T>(e, q, v);
  }

  /**
   * The fake datasets differ in what they select: a field's selection names its subgraph (a question of which ids are
   * still there, selecting ids alone, is the mutable dataset's: no other asks it).
   */
  private subgraphOf(field: string): FakeSubgraph | undefined {
    const named = this.subgraphs.find((x) => field.endsWith(`{ ${selection(x.ds)} }`));
    return named ?? (field.endsWith('{ id }') ? this.subgraphs.find((x) => x.ds.kind === 'mutable') : undefined);
  }

  answerData<T>(e: Endpoint, body: Uint8Array): T {
    return this.subgraphs[0]!.answerData<T>(e, body);
  }

  async requestBody(e: Endpoint, q: string, v: Record<string, unknown>) {
    this.requests++;
    if (this.down) throw this.down;
    if (!q.startsWith('query FirstPages(')) return this.subgraphOf(q.slice(0, -2))!.requestBody(e, q, v);
    const body = q.slice(q.indexOf(') { ') + 4, -2);
    const fields = body.split(/ (?=[ap]\d+: )/);
    const data: string[] = [];
    const byIndex = new Map<number, FakeSubgraph>();
    for (const f of fields) {
      const [, kind, n] = /^([ap])(\d+): /.exec(f)!;
      const alias = `${kind}${n}`;
      // The fake datasets differ in what they select: a page field's selection names its subgraph, and the question
      // of ids' presence after it (`p<i>`) is its page field's (`a<i>`).
      const sub = kind === 'a' ? this.subgraphOf(f) : byIndex.get(Number(n));
      if (!sub) throw new Error(`alias ${alias} names no subgraph`);
      byIndex.set(Number(n), sub);
      if (this.failing.has(sub)) {
        const errors = [{ message: 'Type `Fake` has no field `value`' }];
        return { body: Buffer.from(JSON.stringify({ errors })), bytes: 0 };
      }
      const field = f.slice(f.indexOf(': ') + 2).replaceAll(`$${alias}_`, '$');
      const vars = Object.fromEntries(
        Object.entries(v)
          .filter(([k]) => k.startsWith(`${alias}_`))
          .map(([k, x]) => [k.slice(`${alias}_`.length), x]),
      );
      const one = await sub.requestBody(e, `query Page($first: Int!) { rows: ${field} }`, vars);
      const text = this.hostile.get(sub)?.[kind as 'a' | 'p'];
      data.push(`"${alias}":${text ?? dataMembers(Buffer.from(one.body).toString('utf8'))!.get('rows')}`);
    }
    const answer = Buffer.from(`{"data":{${data.join(',')}}${this.besideData}}`);
    return { body: answer, bytes: answer.byteLength };
  }
}

/** A task of `kind` that has read every row up to block 100, with the rows of `n`; the cursor it left. */
export async function readUpTo100(kind: CursorKind, n: number, changeBlock = true, ds = fakeDataset(kind)) {
  const src = new FakeSubgraph(ds);
  src.rows = rowsOf(n);
  const wh = new FakeWarehouse(ds);
  const first = fakeTask(src, wh, { reorgWindowSecs: 60 });
  const r = await runTask(first.task, first.deps, pinAt(100, 10_000, changeBlock));
  return { ds, src, wh, cursor: JSON.parse(r.run.cursor!) as Cursor };
}

/** Four datasets read up to block 100, with new rows since; their asks at block 200 and a batch upstream over them. */
export async function fourRoutes() {
  const kinds: CursorKind[] = ['event', 'bucket', 'mutable', 'snapshot'];
  const read = await Promise.all(kinds.map((k) => readUpTo100(k, 30)));
  // Rows past the last run's, in every dataset: the batch must bring them.
  for (const r of read) r.src.rows = rowsOf(60).map((x, i) => (i < 30 ? x : { ...x, changed: 101 + i }));
  // And one row of the mutable dataset that the last run read is gone upstream (a reorg reverted the block that made it).
  read[2]!.src.rows.splice(7, 1);
  const pin = pinAt(200, 10_500);
  const at = { block: pin.block, changeBlock: true, windowSecs: 60 };
  const asks: FirstAsk[] = [];
  for (const r of read) {
    const from = windowPresenceFrom(r.ds, r.cursor, at);
    const present = from === undefined ? [] : await r.wh.idsReadSince(56, r.ds, { from, exceptRun: 'this run' });
    const request = firstRequest(r.ds, r.cursor, at)!;
    asks.push({ endpoint: ENDPOINT, ds: r.ds, root: pin.root, request, ...(present.length ? { present } : {}) });
  }
  expect(asks.find((a) => a.ds.kind === 'mutable')!.present).toHaveLength(30);
  const upstream = new BatchUpstream(read.map((r) => r.src));
  return { read, pin, asks, upstream };
}

export const quiet = { concurrency: 2, log: () => undefined, signal: new AbortController().signal };

/** The first pages of `asks` read from `upstream` in batches of up to 32, with the lines the read logged. */
export async function readLogged(asks: FirstAsk[], upstream: PageSource) {
  const pages = new FirstPages(upstream, { pageSize: 100, maxAliases: 32 });
  const events: Record<string, unknown>[] = [];
  await pages.read(asks, { ...quiet, log: (_e, f) => events.push(f) });
  return { pages, events };
}
