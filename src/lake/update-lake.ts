/**
 * The lake's update, as every run makes it (and `migrate`, `verify --repair` and `compact` outside a run): what the
 * lake lacks of the warehouse is written (`lake-writer.ts`), after a lake of an earlier layout, if this is one, is
 * migrated (`migrate-lake.ts`, which does nothing else).
 */
import type { Warehouse } from '../store/warehouse.ts';
import { writeLake } from './lake-writer.ts';
import { migrateEarlierLake } from './migrate-lake.ts';

/** Brings the data folder's lake up to the warehouse; returns the files written. */
export async function updateLake(
  w: Warehouse,
  dataDir: string,
  opts: Parameters<typeof writeLake>[2] = {},
): Promise<number> {
  const migrated = await migrateEarlierLake(w, dataDir);
  return migrated + (await writeLake(w, dataDir, opts));
}
