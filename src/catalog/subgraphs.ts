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
import { inert } from '../util/inert.ts';
import { type Dataset, registerDatasets, WAREHOUSE_SCHEMA } from './catalog.ts';
import type { Job } from './job.ts';
import { decideNames, layoutConflicts, type SubgraphNames } from './names.ts';
import { subgraphDatasetsOf, typeOverride } from './subgraph-datasets.ts';

/** One deployment of a subgraph: the chain and the graph-node endpoint that serves it there. */
export interface SubgraphDeployment {
  readonly chainId: number;
  readonly url: string;
  /**
   * The deployment (its manifest's IPFS hash) the URL served when the subgraph was added or last refreshed, where
   * known. A run refuses another one, as a new version may have changed any row, until `subgraph refresh` takes it.
   */
  readonly deployment?: string;
  /**
   * The entities of the schema this deployment serves no collection of, as `subgraph add` or `refresh` found them: they
   * are not read there (a run would find them unavailable every time) until a refresh finds them served.
   */
  readonly unserved?: readonly string[];
  /**
   * The blocks of history the deployment keeps, as its manifest's `indexerHints.prune` said when the subgraph was added
   * or refreshed (undefined: every block, or not known). A task reads at a newer block before its own is pruned.
   */
  readonly history?: number;
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
   * schema (`subgraph-datasets.ts`, `typeOverride`).
   */
  readonly types?: Readonly<Record<string, string>>;
  /**
   * The names of its tables and columns, decided when it was added or last refreshed (`names.ts`) and kept from then
   * on; absent for a subgraph of the config file and one added before names were kept, which take the rule's names.
   */
  readonly names?: SubgraphNames;
}

/** A subgraph's name: a warehouse schema, a lake folder and a path segment, so letters, digits and `_` only. */
export const SUBGRAPH_NAME = /^[a-z][a-z0-9_]{0,62}$/;

/** Schema and catalog names a subgraph cannot take, and whose they are. */
const TAKEN: Readonly<Record<string, string>> = {
  ...Object.fromEntries(['dodoex', 'exchange', 'token', 'mine', 'list'].map((n) => [n, "DODO's data"])),
  reports: "the schema of pool-export's report views",
  main: "DuckDB's default schema, where pool-export keeps its macros",
  ...Object.fromEntries(
    ['temp', 'system', 'pg_catalog', 'information_schema', 'memory'].map((n) => [n, "DuckDB's own schema or catalog"]),
  ),
  ...Object.fromEntries(
    ['warehouse', 'views', 'lake', 'old_wh', 'new_wh'].map((n) => [n, 'the name of a database file pool-export opens']),
  ),
};

/**
 * DuckDB's reserved keywords (`duckdb_keywords()` of DuckDB 1.5, category `reserved`; test/unit/names.test.ts compares
 * them with the DuckDB installed): a schema of one of these names has to be quoted in every query a user writes.
 */
export const SQL_RESERVED: ReadonlySet<string> = new Set(
  `all analyse analyze and any array as asc asymmetric both case cast check collate column constraint create default
  deferrable desc describe distinct do else end except false fetch for foreign from group having in initially intersect
  into lambda lateral leading limit not null offset on only or order pivot pivot_longer pivot_wider placing primary
  qualify references returning select show some summarize symmetric table then to trailing true union unique unpivot
  using variadic when where window with`.split(/\s+/),
);

/** Checks a subgraph's name; the message names the rule and a name that can be used. */
export function checkSubgraphName(name: string): void {
  const rule =
    'a subgraph name starts with a lowercase letter and holds only a-z, 0-9 and _ (at most 63), as it names a warehouse schema';
  if (!SUBGRAPH_NAME.test(name)) {
    const near = name
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/^[^a-z]+/, '')
      .slice(0, 63);
    throw new UsageError(`subgraph name "${inert(name)}": ${rule}: e.g. ${near || 'uniswap_v2'}`);
  }
  const whose =
    TAKEN[name] ?? (SQL_RESERVED.has(name) ? 'a reserved word of SQL, which a query must quote' : undefined);
  if (whose)
    throw new UsageError(`subgraph name "${name}" is taken: it is ${whose}; choose another, such as ${name}_sg`);
}

const registered = new Map<string, { spec: SubgraphSpec; model: SchemaModel; datasets: readonly Dataset[] }>();

/**
 * The model of a subgraph's schema, or a usage error naming the subgraph and what is wrong: a schema that does not
 * parse, one graph-node cannot lay out (`names.ts`, `layoutConflicts`), an entity or `types` entry it lacks.
 */
export function subgraphModel(spec: Pick<SubgraphSpec, 'name' | 'schema' | 'entities' | 'types'>): SchemaModel {
  let model: SchemaModel;
  try {
    model = parseSchemaModel(spec.name, spec.schema);
  } catch (e) {
    if (e instanceof SchemaModelError) throw new UsageError(`subgraph ${spec.name}: ${e.message}`);
    throw e;
  }
  const conflicts = layoutConflicts(model);
  if (conflicts.length) throw new UsageError(`subgraph ${spec.name}: ${inert(conflicts.join('; '))}`);
  const names = [...model.entities, ...(model.aggregations ?? [])].map((e) => e.name);
  for (const n of spec.entities ?? [])
    if (!names.includes(n))
      throw new UsageError(`subgraph ${spec.name} has no entity ${inert(n)}; its entities: ${names.join(', ')}`);
  for (const [key, type] of Object.entries(spec.types ?? {})) typeOverride({ name: spec.name, model }, key, type);
  return model;
}

/** A subgraph of the configuration that could not be taken: its name, and why, in one line naming the fix. */
export interface SetAside {
  readonly name: string;
  readonly error: string;
  /** The whole list of the data folder could not be read: no subgraph of it is taken. */
  readonly whole?: true;
}

const setAside = new Map<string, SetAside>();

/**
 * What a subgraph set aside is, for a line that says why it is not exported: `subgraph NAME`, or the data folder's list
 * itself where it cannot be read at all (`whole`: none of its subgraphs is exported).
 */
export function asideSubject(s: SetAside): string {
  return s.whole ? "the data folder's list of subgraphs" : `subgraph ${inert(s.name)}`;
}

/** The subgraphs the last registration set aside (each fails alone: the others are exported). */
export function setAsideSubgraphs(): readonly SetAside[] {
  return [...setAside.values()];
}

/** Sets a subgraph aside that cannot be read from the configuration at all (a malformed entry, an unreadable list). */
export function setSubgraphAside(entry: SetAside): void {
  setAside.set(entry.name, entry);
}

/**
 * Registers subgraphs into the catalog, once per name: the same schema and entities again take the new deployments;
 * another schema under a known name is an error (a process serves one catalog). A subgraph that cannot be registered
 * (its name, schema, entities or types refused) is set aside with its reason (`setAsideSubgraphs`): the others are
 * registered all the same; unless `strict` says it is one whose refusal stops the command (the config file's, which its
 * user has just written). Returns those registered.
 */
export function registerSubgraphs(
  specs: readonly SubgraphSpec[],
  opts: { readonly strict?: (name: string) => boolean } = {},
): SubgraphSpec[] {
  const taken: SubgraphSpec[] = [];
  for (const spec of specs) {
    try {
      register(spec);
      setAside.delete(spec.name);
      taken.push(spec);
    } catch (e) {
      if (opts.strict?.(spec.name)) throw e;
      // Whatever a hand or an earlier version left in its entry (names of another shape, say) fails it alone.
      const error =
        e instanceof UsageError ? e.message : `subgraph ${spec.name} cannot be read: ${(e as Error).message}`;
      setAside.set(spec.name, { name: spec.name, error });
    }
  }
  return taken;
}

function register(spec: SubgraphSpec): void {
  checkSubgraphName(spec.name);
  const model = subgraphModel(spec);
  const known = registered.get(spec.name);
  // Loaded again (another configuration in the same process): the same schema keeps its datasets, and its deployments
  // may move; another one (a refresh meanwhile) takes their place.
  const same = (s: SubgraphSpec) => JSON.stringify([s.schema, s.entities, s.types ?? {}, s.names ?? {}]);
  if (known && same(known.spec) === same(spec)) {
    registered.set(spec.name, { ...known, spec });
    return;
  }
  const datasets = specDatasets(spec, model);
  WAREHOUSE_SCHEMA[spec.name] = spec.name;
  registerDatasets(datasets, known ? spec.name : undefined);
  registered.set(spec.name, { spec, model, datasets });
}

/** The datasets of a subgraph: those of its schema's entities and aggregations, or of the ones `entities` names. */
export function specDatasets(
  spec: Pick<SubgraphSpec, 'name' | 'entities' | 'types' | 'names'>,
  model: SchemaModel,
): Dataset[] {
  const only = spec.entities?.length ? new Set(spec.entities) : undefined;
  const entities: EntityModel[] = model.entities.filter((e) => !only || only.has(e.name));
  const aggregations = model.aggregations?.filter((a) => !only || only.has(a.name));
  // The types of the entities taken (each was checked against the whole schema by `subgraphModel`).
  const types = Object.fromEntries(
    Object.entries(spec.types ?? {}).filter(([k]) => !only || only.has(k.split('.')[0]!)),
  );
  // Names are decided over the whole schema, so that an entity taken later keeps the names it has now.
  const names = decideNames(model, spec.names).names;
  return subgraphDatasetsOf(
    spec.name,
    { ...model, entities, ...(aggregations ? { aggregations } : {}) },
    { types, names },
  );
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
  const aside = setAside.get(name);
  if (!r && aside) throw new UsageError(`subgraph ${name} is set aside, not exported: ${aside.error}`);
  if (!r) throw new UsageError(`unknown subgraph "${inert(name)}"; ${knownList()}`);
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

/** Whether a subgraph's deployment on a chain serves an entity (DODO's schemas: always; the run finds out). */
export function servedOn(schema: string, chainId: number, entity: string): boolean {
  const d = registered.get(schema)?.spec.deployments.find((x) => x.chainId === chainId);
  return !d?.unserved?.includes(entity);
}

/** The blocks of history a subgraph's deployment on a chain keeps (`indexerHints.prune`), or undefined for every one. */
export function historyOf(schema: string, chainId: number): number | undefined {
  const h = registered.get(schema)?.spec.deployments.find((d) => d.chainId === chainId)?.history;
  return typeof h === 'number' && Number.isSafeInteger(h) && h > 0 ? h : undefined;
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
