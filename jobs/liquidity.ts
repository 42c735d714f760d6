import type { Job } from '../src/catalog/job.ts';

/** Liquidity-list snapshots: TVL and APY of every pool, as a time series. */
export const liquidity: Job = {
  name: 'liquidity',
  schedule: '*/15 * * * *',
  description: 'liquidity-list snapshot of every pool (TVL, APY, reserves) every 15 minutes',
  datasets: ['list.liquidity'],
};
