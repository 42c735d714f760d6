/**
 * What is new in one request per route (src/export/first-pages.ts): each foreseen first request is the one the
 * paginator sends; a batch's answer serves each task the page its own request would have got, byte for byte; a batch
 * whose answer fails for one dataset is split so the others are still answered; a route that fails ends the batch.
 * This file: the foreseen first request and the batched query against the sandbox; FirstPages itself, and the
 * members of an answer and the commit order, are in first-pages-*.test.ts beside it.
 */

import { describe, expect, inject, it } from 'vitest';
import { type Dataset, findDataset } from '../../src/catalog/catalog.ts';
import { runTask } from '../../src/export/by-kind.ts';
import { batchQuery, type FirstAsk } from '../../src/export/first-batch.ts';
import { firstRequest, windowPresenceFrom } from '../../src/export/paginate/first-request.ts';
import { pageQuery } from '../../src/export/queries.ts';
import type { Cursor } from '../../src/export/task-run.ts';
import { callControl } from '../../src/sandbox/spawn.ts';
import { ENDPOINT, Recording, readUpTo100 } from '../support/first-pages-fixture.ts';
import { post, subgraphPath } from '../support/sandbox-client.ts';
import { fakeDataset, fakeTask, pinAt } from '../support/task-fakes.ts';

describe('the first request of a task, foreseen', () => {
  /** A subgraph's mutable entity with no field to page by but its id (`subgraphDatasetsOf` in `src/catalog/catalog.ts`). */
  const idOnly = (): Dataset => {
    const { seq: _seq, seqType: _type, ...ds } = fakeDataset('mutable');
    return { ...ds, columns: ds.columns.filter((c) => c.field !== 'updatedAt') };
  };
  const cases: [string, boolean, () => Dataset][] = [
    ['event', true, () => fakeDataset('event')],
    ['bucket', true, () => fakeDataset('bucket')],
    ['mutable', true, () => fakeDataset('mutable')],
    ['mutable', false, () => fakeDataset('mutable')],
    ['mutable with no keyset field', false, idOnly],
    ['snapshot', true, () => fakeDataset('snapshot')],
  ];
  it.each(cases)('is the one the paginator sends (%s, _change_block %s)', async (_kind, changeBlock, dataset) => {
    const given = dataset();
    const { ds, src, wh, cursor } = await readUpTo100(given.kind, 40, changeBlock, given);
    const pin = pinAt(200, 10_500, changeBlock);
    const foreseen = firstRequest(ds, cursor, { block: pin.block, changeBlock, windowSecs: 60 });
    expect(foreseen).toBeDefined();
    const rec = new Recording(src);
    const next = fakeTask(src, wh, { reorgWindowSecs: 60 });
    await runTask(next.task, { ...next.deps, source: rec }, pin);
    expect(rec.asked[0]!.query).toBe(pageQuery(ds, pin.root, foreseen!.shape));
    expect(rec.asked[0]!.vars).toEqual({ first: next.deps.config.pageSize, ...foreseen!.vars });
  });

  it('is not foreseen for a backfill, a resumed full pass or the list', () => {
    const at = { block: { number: 5, timestamp: 9 }, changeBlock: true, windowSecs: 60 };
    expect(firstRequest(fakeDataset('event'), {}, at)).toBeUndefined();
    expect(firstRequest(fakeDataset('mutable'), { mode: 'full', id: '0x01' }, at)).toBeUndefined();
    expect(firstRequest(fakeDataset('list'), {}, at)).toBeUndefined();
    expect(firstRequest(fakeDataset('list'), { mode: 'incremental', seq: '9', block: 4 }, at)).toBeUndefined();
  });

  it('asks which rows are still upstream from the window of an incremental mutable pass only', () => {
    // 100 blocks in 500 s since the last run: 0.2 a second, so a window of 60 s is 12 blocks, and the check starts
    // one block before them: 100 - 12 - 1.
    const at = { block: { number: 200, timestamp: 10_500 }, changeBlock: true, windowSecs: 60 };
    const cursor = { mode: 'incremental' as const, seq: '10000', block: 100 };
    expect(windowPresenceFrom(fakeDataset('mutable'), cursor, at)).toBe(87);
    expect(windowPresenceFrom(fakeDataset('event'), cursor, at)).toBeUndefined();
    expect(windowPresenceFrom(fakeDataset('mutable'), { ...cursor, mode: 'full' }, at)).toBeUndefined();
    // No block since the last run: a reorganisation to the same height may have taken rows back (the task runs only
    // when the head's hash moved), over the window at the fastest pace: 600 blocks, from block 0.
    expect(windowPresenceFrom(fakeDataset('mutable'), { ...cursor, block: 200 }, at)).toBe(0);
  });
});

describe('the batched query, against the sandbox', () => {
  const sb = inject('sharedSandbox');
  /** One GraphQL request to the sandbox's DODO subgraph of BNB Chain: its `data` and `errors`. */
  const ask = async (query: string, variables: Record<string, unknown>) =>
    (await post(sb, subgraphPath(sb, 56, 'dodoex'), { query, variables })).body;

  it('is one query the upstream accepts, whose every alias holds what its own page query answers', async () => {
    const info = await callControl<{ chains: { chainId: number; head: number; timestamp: number }[] }>(sb.url, 'info');
    const head = info.chains.find((c) => c.chainId === 56)!;
    const at = { block: { number: head.head, timestamp: head.timestamp }, changeBlock: true, windowSecs: 3600 };
    const day = 86_400;
    // The root fields are graph-node's names for the entity types (the schema's `Swap` is asked as `swaps`).
    const datasets: [string, string, Cursor][] = [
      ['dodoex.swaps', 'swaps', { seq: String(head.timestamp - day) }],
      [
        'dodoex.pairs',
        'pairs',
        { mode: 'incremental', seq: String(head.timestamp - 30 * day), block: head.head - 50_000 },
      ],
      ['dodoex.pair_day_datas', 'pairDayDatas', { seq: String(head.timestamp - 3 * day) }],
      ['dodoex.dodo_zoos', 'dodoZoos', {}],
    ];
    // Some pairs the upstream holds, and an id it does not.
    const held = ((await ask('{ pairs(first: 3) { id } }', {})).data!.pairs as { id: string }[]).map((r) => r.id);
    expect(held).toHaveLength(3);
    const asks: FirstAsk[] = datasets.map(([name, root, cursor]) => {
      const ds = findDataset(name)!;
      const present = ds.kind === 'mutable' ? { present: [...held, '0x00000000000000000000000000000000000dead'] } : {};
      return { endpoint: ENDPOINT, ds, root, request: firstRequest(ds, cursor, at)!, ...present };
    });
    const { query, vars } = batchQuery(asks, 100);
    const batch = await ask(query, vars);
    expect(batch.errors).toBeUndefined();
    for (const [i, a] of asks.entries()) {
      const own = await ask(pageQuery(a.ds, a.root, a.request.shape), { first: 100, ...a.request.vars });
      expect(own.errors).toBeUndefined();
      expect(own.data!.rows!.length).toBeGreaterThan(0);
      expect(batch.data![`a${i}`]).toEqual(own.data!.rows);
    }
    expect((batch.data!.p1 as { id: string }[]).map((r) => r.id).sort()).toEqual([...held].sort());
    expect(Object.keys(batch.data!).sort()).toEqual(['a0', 'a1', 'a2', 'a3', 'p1']);
  });
});
