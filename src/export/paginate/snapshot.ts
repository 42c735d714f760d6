/** Snapshot datasets (`dodo_zoos`, `dodo_tokens`, `trading_incentives`): every row each run, kept per block. */

import { firstId } from '../queries.ts';
import type { TaskRun } from '../task-run.ts';
import { pageById } from './by-id.ts';

/** Reads every row by id and commits them as one snapshot at the pinned block. */
export async function pageSnapshot(run: TaskRun): Promise<void> {
  await pageById(run, {
    pass: { shape: 'id' },
    startId: firstId(run.task.ds),
    replace: { kind: 'snapshot' },
    finish: {},
  });
}
