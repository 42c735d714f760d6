/**
 * Root query field names of a deployment, and the deployment profiles the sandbox can serve. The exporter never uses
 * these rules: it reads root fields from each endpoint's introspection, so the sandbox serves the variants it must handle.
 *
 * graph-node derives the names from the entity name (graphprotocol/graph-node `graph/src/data/graphql/ext.rs`,
 * `camel_cased_names`): the singular is the lower camel case name, the plural its English plural. Since commit
 * ebe91ad42 (v0.35.0, January 2024) a plural equal to the singular gets the suffix `_collection`
 * (`maintainerEarnings_collection`); before it, the collection field took that name and no single-row field was left
 * (the indexing gateway's schema still has `maintainerEarnings: [MaintainerEarnings!]!` and no single lookup: DODOEX/widgets
 * a56d6a1a, `packages/dodoex-api/src/gql/graphql.ts`, type `Query`).
 */
import { type EntityModel, lowerCamel, pluralize, type SchemaModel } from '../schemas/entity-model.ts';
import { interfaceEntity } from './interface-table.ts';

/** graph-node's naming rule: `current` from v0.35.0 on, `legacy` before it. */
export type NamingMode = 'current' | 'legacy';

/** What one deployment serves: how its root fields are named, which entities it lacks, which filters it has. */
export interface DeploymentProfile {
  readonly naming: NamingMode;
  /** Entities absent from this deployment (an older subgraph version). */
  readonly omit: readonly string[];
  /** Whether filters take `_change_block` (graph-node v0.27.0 and later, PR #3186). */
  readonly changeBlock: boolean;
}

/**
 * The entities the indexing gateway's deployment lacks: its `Query` has no `positiveSlippage(s)`, `pairDetail(s)` or
 * DPPOracleAdmin fields (DODOEX/widgets a56d6a1a, `graphql.ts`, type `Query`); they were added to the subgraph in 2023.
 */
export const GATEWAY_MISSING_ENTITIES: readonly string[] = ['PositiveSlippage', 'PairDetail', 'DPPOracleAdmin'];

/**
 * Named profiles for `--profile` and `--gateway-profile`: `current` is graph-node v0.35.0 and later; `legacy` v0.27 to
 * v0.34; `gateway` is the indexing gateway's deployment (legacy names, three entities fewer); `ancient` is a graph-node
 * before v0.27.0, with legacy names and no `_change_block` filter.
 */
export const PROFILES: Readonly<Record<string, DeploymentProfile>> = {
  current: { naming: 'current', omit: [], changeBlock: true },
  legacy: { naming: 'legacy', omit: [], changeBlock: true },
  gateway: { naming: 'legacy', omit: GATEWAY_MISSING_ENTITIES, changeBlock: true },
  ancient: { naming: 'legacy', omit: [], changeBlock: false },
};

/** The root fields of one entity: the single-row lookup (absent in legacy naming when it equals the plural) and the collection. */
export interface RootNames {
  readonly single?: string;
  readonly plural: string;
}

/** The root field names of an entity under a naming mode. */
export function rootNames(entity: string, mode: NamingMode): RootNames {
  const single = lowerCamel(entity);
  const plural = lowerCamel(pluralize(entity));
  if (plural !== single) return { single, plural };
  return mode === 'current' ? { single, plural: `${plural}_collection` } : { plural };
}

/** Every root field of a schema under a naming mode, with its entity and whether it returns a list. */
export function rootFields(model: SchemaModel, mode: NamingMode): Map<string, { entity: EntityModel; many: boolean }> {
  // The first field of a name answers, as graph-node's does (`api-schema.ts`, `firstOfEachName`).
  const out = new Map<string, { entity: EntityModel; many: boolean }>();
  const add = (name: string, to: { entity: EntityModel; many: boolean }) => (out.has(name) ? out : out.set(name, to));
  for (const e of model.entities) {
    const names = rootNames(e.name, mode);
    if (names.single) add(names.single, { entity: e, many: false });
    add(names.plural, { entity: e, many: true });
  }
  // An interface has its root fields too (graph-node `api.rs` `add_query_type`), over the rows of its implementers.
  for (const i of model.interfaces?.values() ?? []) {
    const entity = interfaceEntity(model, i.name)!;
    const names = rootNames(i.name, mode);
    if (names.single) add(names.single, { entity, many: false });
    add(names.plural, { entity, many: true });
  }
  // An aggregation has its plural only, asked per interval.
  for (const a of model.aggregations ?? []) add(rootNames(a.name, mode).plural, { entity: a, many: true });
  return out;
}
