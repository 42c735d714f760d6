import { DATASETS } from '../src/catalog/catalog.ts';
import type { Job } from '../src/catalog/job.ts';

/** Mutable state of the exchange schema: pools, tokens, users, positions, global counters. */
export const state: Job = {
  name: 'state',
  schedule: '7 * * * *',
  description: 'pools, tokens, users, positions, crowd pools and global counters every hour',
  datasets: DATASETS.filter((d) => d.schema === 'dodoex' && (d.kind === 'mutable' || d.kind === 'snapshot')).map(
    (d) => d.name,
  ),
};
