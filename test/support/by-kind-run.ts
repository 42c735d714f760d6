/**
 * How the tests of `runTask` (test/unit/by-kind*.test.ts) run a task against the in-memory fakes of
 * test/support/task-fakes.ts: rows whose keys tie, a run that returns what the task did, and the TaskError it fails with.
 */
import { expect } from 'vitest';
import { TaskError } from '../../src/errors.ts';
import { runTask } from '../../src/export/by-kind.ts';
import type { TaskStats } from '../../src/export/task.ts';
import { type FakeRow, type FakeSubgraph, type FakeWarehouse, fakeTask, pinAt } from './task-fakes.ts';

/** `n` rows whose keys tie in threes (a keyset on the key alone would lose rows at page borders). */
export function rowsOf(n: number, start = 1000): FakeRow[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `0x${((i * 7919) % 100_003).toString(16).padStart(6, '0')}`,
    seq: start + Math.floor(i / 3),
    value: `v${i}`,
    changed: 1,
  }));
}

/** Runs the task and returns what it did, or throws its TaskError. */
export async function run(
  src: FakeSubgraph,
  wh: FakeWarehouse,
  opts: Parameters<typeof fakeTask>[2] = {},
  pin = pinAt(100, 10_000),
) {
  const { task, deps, events } = fakeTask(src, wh, opts);
  const r = await runTask(task, deps, pin);
  return { stats: r.run.stats, cursor: r.run.cursor, before: r.before, events };
}

/** The TaskError a run fails with. */
export async function failure(p: Promise<unknown>): Promise<TaskError<TaskStats>> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(TaskError);
  return e as TaskError<TaskStats>;
}
