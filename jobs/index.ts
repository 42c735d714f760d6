/** The jobs shipped with pool-export. Add a file here and list it below to add a job. */
import { UsageError } from '../src/config/chains.ts';
import { events } from './events.ts';
import type { Job } from './job.ts';
import { liquidity } from './liquidity.ts';
import { state } from './state.ts';
import { tokenMining } from './token-mining.ts';

/** Every job, by name. */
export const JOBS: readonly Job[] = [liquidity, events, state, tokenMining];

/** The jobs named in a comma list, or all of them. */
export function selectJobs(names: readonly string[] | undefined): Job[] {
  if (!names?.length) return [...JOBS];
  return names.map((n) => {
    const j = JOBS.find((x) => x.name === n);
    if (!j) throw new UsageError(`unknown job "${n}"; jobs: ${JOBS.map((x) => x.name).join(', ')}`);
    return j;
  });
}
