/**
 * The members of a batched answer read one by one as text (json-members), and the order in which the tasks of a
 * batch commit (commitOrder).
 */

import { describe, expect, it } from 'vitest';
import { commitOrder } from '../../src/export/commit-order.ts';
import type { Task } from '../../src/export/task.ts';
import { arrayLength } from '../../src/util/json-members.ts';
import { dataMembers } from '../support/first-pages-fixture.ts';

describe('json-members', () => {
  it('cuts each member of `data` out as the bytes that came, whatever its strings hold', () => {
    const rows = '[{"id":"a\\"]}","v":1,"v":2},{"id":"b","n":[1,{"x":"}"}],"s":"名前🦄"}]';
    const text = `{ "data" : { "a0" : ${rows} , "a1":[], "a2" : null } }\n`;
    const m = dataMembers(text)!;
    expect(m.get('a0')).toBe(rows);
    expect(JSON.parse(m.get('a0')!)).toHaveLength(2);
    expect(m.get('a1')).toBe('[]');
    expect(m.get('a2')).toBe('null');
    expect(dataMembers('{"errors":[{"message":"x"}]}')).toBeUndefined();
    expect(dataMembers('{"data":[1]}')).toBeUndefined();
    // Broken structure, anywhere the scan walks: no members.
    for (const broken of [
      '{"data":{"a0":[1]',
      '{"data":{"a0":[1}}}',
      '{"data":{"a0" [1]}}',
      '{"data":{"a0":[1]}} x',
      '{"data":{"a0":}}',
    ])
      expect(dataMembers(broken), broken).toBeUndefined();
  });

  it('counts the rows of a page as JSON.parse does, up to a bound, and refuses what is no list', () => {
    const rows = '[{"id":"a,\\"]}","n":[1,2,{"x":"]"}]} , {"id":"b"},\n{"id":"名前🦄"}]';
    expect(JSON.parse(rows)).toHaveLength(3);
    const bytes = (t: string) => Buffer.from(t);
    expect(arrayLength(bytes(rows))).toBe(3);
    expect(arrayLength(bytes(rows), 2)).toBe(2);
    expect(arrayLength(bytes(rows), 100)).toBe(3);
    expect(arrayLength(bytes(' [ ] '))).toBe(0);
    expect(arrayLength(bytes('[1]'))).toBe(1);
    for (const broken of ['{"a":1}', '[1,]', '[1 2]', '[1', '[1]x', 'null', ''])
      expect(arrayLength(bytes(broken)), broken).toBeUndefined();
  });
});

describe('commitOrder', () => {
  it('queues the tasks that only commit a held first page dataset by dataset across chains, the others in plan order', () => {
    const ds = (name: string) => ({ name }) as Task['ds'];
    const [a, b] = [ds('dodoex.swaps'), ds('dodoex.pairs')];
    // The plan's order: chain by chain. `short` marks the tasks whose first page a batch holds whole.
    const plan = [
      { ds: a, chainId: 56, short: true },
      { ds: b, chainId: 56, short: true },
      { ds: a, chainId: 1, short: false },
      { ds: b, chainId: 1, short: true },
      { ds: a, chainId: 137, short: true },
      { ds: b, chainId: 137, short: false },
      { ds: a, chainId: 10, short: true },
    ];
    const tasks = plan.map((p) => ({ ds: p.ds, chainId: p.chainId }) as Task);
    const order = commitOrder(tasks, (t) => plan[tasks.indexOf(t)]!.short);
    expect(order.map((i) => `${plan[i]!.ds.name}@${plan[i]!.chainId}`)).toEqual([
      'dodoex.pairs@1',
      'dodoex.pairs@56',
      'dodoex.swaps@10',
      'dodoex.swaps@56',
      'dodoex.swaps@137',
      'dodoex.swaps@1',
      'dodoex.pairs@137',
    ]);
    // Every task once.
    expect([...order].sort((x, y) => x - y)).toEqual(plan.map((_, i) => i));
  });

  it('keeps that order at a real plan’s size, where the sort merges runs (300 tasks)', () => {
    const names = ['dodoex.swaps', 'dodoex.pairs', 'dodoex.tokens', 'dodoex.pair_day_datas', 'dodoex.users'];
    const chains = [1, 10, 56, 137, 8453, 42161];
    const tasks: Task[] = [];
    const isShort = new Set<Task>();
    // Chain by chain, as a plan; whether a batch holds a task's page whole follows a fixed pseudo-random pattern.
    for (let i = 0; i < 300; i++) {
      const t = { ds: { name: names[i % 5] }, chainId: chains[Math.floor(i / 50)]! * 1000 + (i % 7) } as Task;
      tasks.push(t);
      if ((i * 37) % 11 < 6) isShort.add(t);
    }
    // The expected order, built another way: the short tasks grouped by dataset name, each group by chain, then the
    // others as the plan has them.
    const byName = new Map<string, number[]>();
    tasks.forEach((t, i) => {
      if (isShort.has(t)) byName.set(t.ds.name, [...(byName.get(t.ds.name) ?? []), i]);
    });
    const expected = [
      ...[...byName.keys()]
        .sort()
        .flatMap((n) => byName.get(n)!.sort((x, y) => tasks[x]!.chainId - tasks[y]!.chainId || x - y)),
      ...tasks.map((_, i) => i).filter((i) => !isShort.has(tasks[i]!)),
    ];
    expect(isShort.size).toBeGreaterThan(100);
    expect(commitOrder(tasks, (t) => isShort.has(t))).toEqual(expected);
  });
});
