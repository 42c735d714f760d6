/** What a test's code asks the warehouse: the statements `w.all` runs from the call on, in order. */
import type { Warehouse } from '../../src/store/warehouse.ts';

export function spyAll(w: Warehouse): string[] {
  const asked: string[] = [];
  const all = w.all.bind(w);
  w.all = ((sql: string, params?: unknown[]) => {
    asked.push(sql);
    return all(sql, params as never);
  }) as Warehouse['all'];
  return asked;
}
