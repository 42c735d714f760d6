/**
 * Generated tables of the `dodoex` schema for one chain: every entity, related like the real subgraph. Each family of
 * entities is built in its own file of `dodoex/`, from the facts they share (`dodoex/context.ts`).
 */
import type { SchemaModel } from '../schemas/entity-model.ts';
import { crowdPoolingBuckets, pairBuckets, tradeBuckets } from './dodoex/buckets.ts';
import { dodoexContext } from './dodoex/context.ts';
import { crowdPoolingTables } from './dodoex/crowd-pooling.ts';
import { eventTables } from './dodoex/events.ts';
import { globalTables } from './dodoex/globals.ts';
import { poolTables } from './dodoex/pools.ts';
import { userTables } from './dodoex/users.ts';
import type { Table } from './table.ts';
import { emptyTable } from './table-kinds.ts';
import type { World } from './world.ts';

export { zooId } from './dodoex/context.ts';

/** Builds every table of the `dodoex` schema for one chain. */
export function dodoexTables(model: SchemaModel, w: World): Map<string, Table> {
  const cx = dodoexContext(model, w);
  const tables = new Map<string, Table>();
  const put = (t: Table) => tables.set(t.entity.name, t);
  for (const family of [
    eventTables,
    poolTables,
    userTables,
    crowdPoolingTables,
    globalTables,
    pairBuckets,
    tradeBuckets,
    crowdPoolingBuckets,
  ]) {
    family(cx, put);
  }
  put(emptyTable(cx.E('FlashLoan')));
  put(emptyTable(cx.E('MiningPool')));
  return tables;
}
