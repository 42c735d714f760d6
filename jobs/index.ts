/** The jobs shipped with pool-export. Add a file here and list it below to add a job. */
import type { Job } from '../src/catalog/job.ts';
import { events } from './events.ts';
import { liquidity } from './liquidity.ts';
import { state } from './state.ts';
import { tokenMining } from './token-mining.ts';

/** Every job, in the order `pool-export jobs` lists them. */
export const JOBS: readonly Job[] = [liquidity, events, state, tokenMining];
