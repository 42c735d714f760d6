/**
 * Subgraphs of any schema, besides DODO's (`pool-export subgraph add`, or `subgraphs` in the config file): each is a
 * name, a deployment per chain (a graph-node endpoint's URL) and its schema. Its catalog derives from the schema as
 * DODO's does, and is registered into the catalog at start, so that every module that walks the datasets (the plan,
 * the warehouse, the lake, the views, verify) sees its tables, under a warehouse schema of its name.
 *
 * How its entities are read: an immutable entity with a `timestamp` in seconds (`BigInt` or `Int`) is an event,
 * appended by `(timestamp, id)` keyset pages with the re-read window; every other entity (mutable, or immutable
 * without such a field, a timeseries' microsecond `Timestamp` among them) is read whole by id once, then by
 * `_change_block` from the re-read window on (a full pass by id each run where the endpoint lacks `_change_block`),
 * as DODO's mutable entities are. An aggregation is a dataset per interval (`token_stats_hour`), read the same way
 * but newest first, the only order graph-node gives it (`export/paginate/aggregation.ts`).
 */
import { UsageError } from '../errors.ts';
import { type EntityModel, parseSchemaModel, type SchemaModel, SchemaModelError } from '../schemas/entity-model.ts';
import { type Dataset, registerDatasets, subgraphDatasetsOf, typeOverride, WAREHOUSE_SCHEMA } from './catalog.ts';
import type { Job } from './job.ts';

/** One deployment of a subgraph: the chain and the graph-node endpoint that serves it there. */
export interface SubgraphDeployment {
  readonly chainId: number;
  readonly url: string;
  /**
   * The deployment (its manifest's IPFS hash) the URL served when the subgraph was added or last refreshed, where
   * known. A run refuses another one, as a new version may have changed any row, until `subgraph refresh` takes it.
   */
  readonly deployment?: string;
}

/** A subgraph as configured. */
export interface SubgraphSpec {
  readonly name: string;
  readonly deployments: readonly SubgraphDeployment[];
  /** Its `schema.graphql` text. */
  readonly schema: string;
  /** Only these entities (default: every one). */
  readonly entities?: readonly string[];
  /**
   * SQL types of fields that take another than their default (`{"Pool.sqrtPrice": "DOUBLE"}`), checked against the
   * schema (`catalog.ts`, `typeOverride`).
   */
  readonly types?: Readonly<Record<string, string>>;
}

/** A subgraph's name: a warehouse schema, a lake folder and a path segment, so letters, digits, `_` and `-` only. */
export const SUBGRAPH_NAME = /^[a-z][a-z0-9_]{0,62}$/;

/** Names a subgraph cannot take: DODO's schemas and the exporter's own. */
const TAKEN = new Set(['dodoex', 'token', 'mine', 'list', 'exchange', 'main', '_pool_export', 'information_schema']);

/** Checks a subgraph's name; the message names the fix. */
export function checkSubgraphName(name: string): void {
  if (!SUBGRAPH_NAME.test(name))
    throw new UsageError(
      `subgraph name "${name}" must start with a lowercase letter and hold only a-z, 0-9 and _ (at most 63), as it names a warehouse schema: e.g. uniswap_v2`,
    );
  if (TAKEN.has(name))
    throw new UsageError(`subgraph name "${name}" is taken by pool-export's own data: choose another`);
}

const registered = new Map<string, { spec: SubgraphSpec; model: SchemaModel; datasets: readonly Dataset[] }>();

/** The model of a subgraph's schema, or a usage error naming the subgraph and what is wrong. */
export function subgraphModel(spec: Pick<SubgraphSpec, 'name' | 'schema' | 'entities' | 'types'>): SchemaModel {
  let model: SchemaModel;
  try {
    model = parseSchemaModel(spec.name, spec.schema);
  } catch (e) {
    if (e instanceof SchemaModelError) throw new UsageError(`subgraph ${spec.name}: ${e.message}`);
    throw e;
  }
  const names = [...model.entities, ...(model.aggregations ?? [])].map((e) => e.name);
  for (const n of spec.entities ?? [])
    if (!names.includes(n))
      throw new UsageError(`subgraph ${spec.name} has no entity ${n}; its entities: ${names.join(', ')}`);
  for (const [key, type] of Object.entries(spec.types ?? {})) typeOverride({ name: spec.name, model }, key, type);
  return model;
}

/**
 * Registers subgraphs into the catalog, once per name: the same schema and entities again take the new deployments;
 * another schema under a known name is an error (a process serves one catalog). Returns them.
 */
export function registerSubgraphs(specs: readonly SubgraphSpec[]): SubgraphSpec[] {
  for (const spec of specs) {
    checkSubgraphName(spec.name);
    const model = subgraphModel(spec);
    const known = registered.get(spec.name);
    if (known) {
      // Loaded again (another configuration in the same process): its datasets stay; its deployments may move.
      if (
        known.spec.schema !== spec.schema ||
        String(known.spec.entities) !== String(spec.entities) ||
        JSON.stringify(known.spec.types ?? {}) !== JSON.stringify(spec.types ?? {})
      )
        throw new Error(`subgraph ${spec.name} is registered twice with different schemas, entities or types`);
      registered.set(spec.name, { ...known, spec });
      continue;
    }
    const datasets = specDatasets(spec, model);
    WAREHOUSE_SCHEMA[spec.name] = spec.name;
    registerDatasets(datasets);
    registered.set(spec.name, { spec, model, datasets });
  }
  return [...specs];
}

/** The datasets of a subgraph: those of its schema's entities and aggregations, or of the ones `entities` names. */
export function specDatasets(spec: Pick<SubgraphSpec, 'name' | 'entities' | 'types'>, model: SchemaModel): Dataset[] {
  const only = spec.entities?.length ? new Set(spec.entities) : undefined;
  const entities: EntityModel[] = model.entities.filter((e) => !only || only.has(e.name));
  const aggregations = model.aggregations?.filter((a) => !only || only.has(a.name));
  // The types of the entities taken (each was checked against the whole schema by `subgraphModel`).
  const types = Object.fromEntries(
    Object.entries(spec.types ?? {}).filter(([k]) => !only || only.has(k.split('.')[0]!)),
  );
  return subgraphDatasetsOf(spec.name, { ...model, entities, ...(aggregations ? { aggregations } : {}) }, types);
}

/** A registered subgraph by its warehouse schema, or undefined (DODO's schemas and the list). */
export function subgraphOf(schema: string): SubgraphSpec | undefined {
  return registered.get(schema)?.spec;
}

/** Every registered subgraph. */
export function subgraphs(): readonly SubgraphSpec[] {
  return [...registered.values()].map((r) => r.spec);
}

/**
 * The job of a subgraph: every dataset of it, hourly (`run` takes it with DODO's jobs; `--subgraphs` picks some). Its
 * name is the subgraph's, so `--jobs NAME` picks it too.
 */
export function subgraphJob(name: string): Job {
  const r = registered.get(name);
  if (!r) throw new UsageError(`unknown subgraph "${name}"; ${knownList()}`);
  return {
    name,
    schedule: '7 * * * *',
    description: `every entity of the subgraph ${name}`,
    datasets: r.datasets.map((d) => d.name),
  };
}

function knownList(): string {
  const names = [...registered.keys()];
  return names.length ? `subgraphs: ${names.join(', ')}` : 'no subgraph is added (pool-export subgraph add)';
}

/** The chains a dataset can be read on: a subgraph's deployments' chains, or undefined (DODO's: the config's chains). */
export function chainsOfSchema(schema: string): readonly number[] | undefined {
  return registered.get(schema)?.spec.deployments.map((d) => d.chainId);
}

/** The deployment a subgraph was added or refreshed at on a chain (its hash), or undefined when not known. */
export function recordedDeployment(schema: string, chainId: number): string | undefined {
  return registered.get(schema)?.spec.deployments.find((d) => d.chainId === chainId)?.deployment;
}

/** The URL of a subgraph's deployment on a chain, or undefined. */
export function deploymentUrl(schema: string, chainId: number): string | undefined {
  return registered.get(schema)?.spec.deployments.find((d) => d.chainId === chainId)?.url;
}

/** The entity or aggregation of a registered subgraph's schema, or undefined. */
export function subgraphEntity(schema: string, entity: string): EntityModel | undefined {
  const model = registered.get(schema)?.model;
  return model?.entities.find((e) => e.name === entity) ?? model?.aggregations?.find((a) => a.name === entity);
}
