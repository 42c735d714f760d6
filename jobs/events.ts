import { DATASETS } from '../src/catalog/catalog.ts';
import type { Job } from '../src/catalog/job.ts';

/** Immutable events and day/hour buckets of the exchange schema. */
export const events: Job = {
  name: 'events',
  schedule: '*/5 * * * *',
  description: 'swaps, orders, liquidity and bid events, day and hour statistics every 5 minutes',
  datasets: DATASETS.filter((d) => d.schema === 'dodoex' && (d.kind === 'event' || d.kind === 'bucket')).map(
    (d) => d.name,
  ),
};
