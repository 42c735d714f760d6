import { DATASETS } from '../src/catalog/catalog.ts';
import type { Job } from '../src/catalog/job.ts';

/** The token-factory and mining schemas. */
export const tokenMining: Job = {
  name: 'token-mining',
  schedule: '23 3 * * *',
  description: 'tokens created on the exchange and mining pools, rewards and stakes once a day',
  datasets: DATASETS.filter((d) => d.schema === 'token' || d.schema === 'mine').map((d) => d.name),
};
