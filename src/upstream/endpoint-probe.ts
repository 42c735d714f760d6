/**
 * What one subgraph endpoint serves, learned with one request per run: its head block, whether it reports indexing
 * errors, the root collection field of each entity, and whether it accepts `_change_block` filters.
 *
 * Root fields are found by their return type, never by a naming rule: graph-node derives them from the entity name, and
 * the rule changed in v0.35.0 (`maintainerEarnings_collection` since; `maintainerEarnings` for the collection and no
 * single-row field before, as on the indexing gateway). Entities a deployment lacks (the gateway has no
 * `PositiveSlippage`, `PairDetail` or `DPPOracleAdmin`) have no root field here, and their datasets are unavailable there.
 */
import type { TypeRef } from './schema-drift.ts';

/**
 * The head of an endpoint, as graph-node's `_meta` gives it: the latest indexed block, the deployment, and whether it
 * met indexing errors. The project's only head query: the probe, `status` and a failover all ask it.
 */
const META = '_meta { block { number hash timestamp } deployment hasIndexingErrors }';

/** The head of an endpoint alone (see `META`). */
export const HEAD_QUERY = `{ ${META} }`;

/** The answer of `HEAD_QUERY`. */
export interface HeadAnswer {
  readonly _meta: {
    block: { number: number; hash: string | null; timestamp: number | null };
    deployment: string;
    hasIndexingErrors: boolean;
  };
}

/**
 * The number of a block known by its hash, or an error when the endpoint's chain does not hold it (a route on another
 * fork): `_meta` at that block.
 */
export const BLOCK_BY_HASH_QUERY = 'query ($hash: Bytes) { _meta(block: { hash: $hash }) { block { number } } }';

/** The probe: the head (`META`), the root fields with their types, and the type that `_change_block` filters take. */
export const PROBE_QUERY = `{ ${META}
  __schema { queryType { fields { name type { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } }
  changeBlock: __type(name: "BlockChangedFilter") { name } }`;

/** The answer of the probe. */
export interface ProbeAnswer extends HeadAnswer {
  readonly __schema: { queryType: { fields: { name: string; type: TypeRef }[] } };
  readonly changeBlock: { name: string } | null;
}

/** What the probe learned about one endpoint. */
export interface EndpointInfo {
  readonly head: { readonly number: number; readonly hash: string | null; readonly timestamp: number | null };
  readonly deployment: string;
  readonly hasIndexingErrors: boolean;
  /** The root collection field of each entity type the deployment has, by entity name. */
  readonly roots: ReadonlyMap<string, string>;
  /** Whether `where: { _change_block: { number_gte } }` is accepted (graph-node v0.27.0 and later). */
  readonly changeBlock: boolean;
}

/** The entity a root field returns a list of, or undefined for any other field (`_meta`, single-row lookups). */
function listOf(t: TypeRef): string | undefined {
  let cur: TypeRef | null | undefined = t;
  if (cur.kind === 'NON_NULL') cur = cur.ofType;
  if (cur?.kind !== 'LIST') return undefined;
  cur = cur.ofType;
  if (cur?.kind === 'NON_NULL') cur = cur.ofType;
  return cur?.kind === 'OBJECT' && cur.name ? cur.name : undefined;
}

/**
 * The collection root field of each entity, from the `Query` type's fields. The first field of a type wins. Only names
 * that start with `__` are GraphQL's own (graph-node f27eb5f, `graph/src/schema/api.rs`): an entity `_ActivityHelper`
 * has a root field that starts with `_`, and `_meta` returns no list.
 */
export function collectionRoots(fields: readonly { name: string; type: TypeRef }[]): Map<string, string> {
  const roots = new Map<string, string>();
  for (const f of fields) {
    const entity = listOf(f.type);
    if (entity && !f.name.startsWith('__') && !roots.has(entity)) roots.set(entity, f.name);
  }
  return roots;
}

/** Reads a probe answer. */
export function endpointInfo(a: ProbeAnswer): EndpointInfo {
  return {
    head: a._meta.block,
    deployment: a._meta.deployment,
    hasIndexingErrors: a._meta.hasIndexingErrors,
    roots: collectionRoots(a.__schema.queryType.fields),
    changeBlock: a.changeBlock?.name === 'BlockChangedFilter',
  };
}
