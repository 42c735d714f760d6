/**
 * What `pool-export subgraph refresh` does to a subgraph, decided without touching the data folder: the spec it
 * records (the new schema and deployments, the names of new entities and fields decided around those kept), what
 * changed, and which datasets are emptied to be read again whole. Pure: the command applies it.
 */

import type { Dataset } from '../catalog/catalog.ts';
import { decideNames, type NameChange } from '../catalog/names.ts';
import { type SubgraphChange, subgraphDrift } from '../catalog/subgraph-drift.ts';
import { type SubgraphDeployment, type SubgraphSpec, specDatasets, subgraphModel } from '../catalog/subgraphs.ts';
import { UsageError } from '../errors.ts';
import type { SchemaModel } from '../schemas/entity-model.ts';
import { tableColumns } from './ddl.ts';

/** A refresh, planned. */
export interface RefreshPlan {
  /** The subgraph as it is recorded from now on: the new schema, hashes and types, and every name. */
  readonly spec: SubgraphSpec;
  /** What changed in the schema (none for a subgraph whose earlier schema this version refuses: it had no data). */
  readonly changes: readonly SubgraphChange[];
  /** The names the rule had to change for the entities and fields that are new. */
  readonly names: readonly NameChange[];
  /** Deployments at another hash than the one recorded: a new version, whose every dataset is read again whole. */
  readonly moved: readonly SubgraphDeployment[];
  /** The datasets of the new schema, under the types recorded before (retyped columns are cast in place). */
  readonly datasets: readonly Dataset[];
  /** The datasets whose columns or paging changed: emptied, read again whole by the next run. */
  readonly reread: readonly Dataset[];
  /** Whether `types` changed. */
  readonly retyped: boolean;
  /** Whether nothing changed: no schema change, no new hash, no new types. */
  readonly unchanged: boolean;
}

/** The model of a subgraph's schema, or undefined where this version refuses it. */
function modelOrNone(spec: SubgraphSpec): SchemaModel | undefined {
  try {
    return subgraphModel(spec);
  } catch (e) {
    if (e instanceof UsageError) return undefined;
    throw e;
  }
}

/**
 * Plans the refresh of `was` to `now` (its new schema, deployments and types). A usage error where a column would have
 * to change type, naming it and the fix.
 */
export function planRefresh(was: SubgraphSpec, now: Omit<SubgraphSpec, 'names'>): RefreshPlan {
  const after = subgraphModel(now);
  const before = modelOrNone(was);
  // Names kept: those recorded, or (a subgraph added before names were kept) those the rule gave its old schema.
  const kept = was.names ?? (before ? decideNames(before).names : {});
  const named = decideNames(after, kept);
  const spec: SubgraphSpec = { ...now, names: named.names };
  const changes = before ? subgraphDrift(before, after) : [];
  const moved = spec.deployments.filter((d, i) => {
    const old = was.deployments[i]!.deployment;
    return old !== undefined && d.deployment !== undefined && d.deployment !== old;
  });
  // A hash seen for the first time (a folder added before hashes were kept) is recorded, as is what a deployment serves.
  const learned = spec.deployments.some(
    (d, i) =>
      d.deployment !== was.deployments[i]!.deployment ||
      String(d.unserved ?? []) !== String(was.deployments[i]!.unserved ?? []) ||
      d.history !== was.deployments[i]!.history,
  );
  const retyped = JSON.stringify(spec.types ?? {}) !== JSON.stringify(was.types ?? {});
  const oldSets = new Map((before ? specDatasets(was, before) : []).map((d) => [d.name, d]));
  // The shape the new schema gives under the old types: a column `--type` retypes is cast in place from its exact text
  // (`store/table-changes.ts`, `retypeColumns`), not read again.
  const datasets = specDatasets({ ...spec, types: was.types ?? {} }, after);
  // Read again whole: a dataset whose columns changed, or whose paging did (an entity found immutable or not).
  const shape = (d: Dataset) => JSON.stringify([tableColumns(d), d.kind, d.seq, d.idType, d.aggregation]);
  const reread = datasets.filter((d) => {
    const o = oldSets.get(d.name);
    return !o || shape(o) !== shape(d);
  });
  // A column keeps its type: a field whose new type needs another one cannot be taken in place.
  for (const d of reread) {
    const types = new Map(tableColumns(oldSets.get(d.name) ?? d));
    for (const [column, type] of tableColumns(d))
      if (types.has(column) && types.get(column) !== type)
        throw new UsageError(
          `subgraph ${was.name}: ${d.name}.${column} would change type (${types.get(column)} → ${type}) as its field's type changed upstream; a column cannot change type in place: pool-export subgraph remove ${was.name}, drop its schema (pool-export shell: DROP SCHEMA ${was.name} CASCADE), then add it again`,
        );
  }
  const unchanged = before !== undefined && !changes.length && !learned && !retyped;
  return { spec, changes, names: named.changes, moved, datasets, reread, retyped, unchanged };
}
