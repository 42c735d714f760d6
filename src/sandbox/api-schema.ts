/** Builds the GraphQL API schema that graph-node generates from an entity schema: filters, orderBy enums, root fields, `_meta`. */
import { buildSchema, type GraphQLSchema } from 'graphql';
import type { EntityModel, FieldModel, SchemaModel } from '../schemas/entity-model.ts';
import { interfaceEntity } from './interface-table.ts';
import { type NamingMode, rootNames } from './naming.ts';

const EQ = ['', '_not'];
const ORD = ['_gt', '_lt', '_gte', '_lte', '_in', '_not_in'];
const STR = [
  '_contains',
  '_contains_nocase',
  '_not_contains',
  '_not_contains_nocase',
  '_starts_with',
  '_starts_with_nocase',
  '_not_starts_with',
  '_not_starts_with_nocase',
  '_ends_with',
  '_ends_with_nocase',
  '_not_ends_with',
  '_not_ends_with_nocase',
];

/** Filter suffixes per scalar type, as graph-node's `field_filter_ops` generates them. */
export const SUFFIXES: Readonly<Record<string, readonly string[]>> = {
  Boolean: [...EQ, '_in', '_not_in'],
  ID: [...EQ, ...ORD],
  Int: [...EQ, ...ORD],
  Int8: [...EQ, ...ORD],
  BigInt: [...EQ, ...ORD],
  BigDecimal: [...EQ, ...ORD],
  Timestamp: [...EQ, ...ORD],
  Bytes: [...EQ, ...ORD, '_contains', '_not_contains'],
  String: [...EQ, ...ORD, ...STR],
};

const LIST_SUFFIXES = ['', '_not', '_contains', '_not_contains'];
const LIST_NOCASE = ['_contains_nocase', '_not_contains_nocase'];

const PRELUDE = `
scalar BigDecimal
scalar BigInt
scalar Bytes
scalar Int8
scalar Timestamp
enum OrderDirection { asc desc }
enum _SubgraphErrorPolicy_ { allow deny }
input Block_height { hash: Bytes number: Int number_gte: Int }
type _Block_ { hash: Bytes number: Int! timestamp: Int parentHash: Bytes }
type _Meta_ { block: _Block_! deployment: String! hasIndexingErrors: Boolean! }
`;

function typeRef(f: FieldModel): string {
  const inner = f.list ? `[${f.type}!]` : f.type;
  return f.nonNull ? `${inner}!` : inner;
}

function collectionArgs(entity: string): string {
  return `skip: Int = 0, first: Int = 100, orderBy: ${entity}_orderBy, orderDirection: OrderDirection, where: ${entity}_filter`;
}

function objectType(e: EntityModel, keyword = 'type'): string {
  const lines = e.fields.map((f) => {
    const args = f.ref && f.list ? `(${collectionArgs(f.type)})` : '';
    return `  ${f.name}${args}: ${typeRef(f)}`;
  });
  const impl = e.interfaces?.length ? ` implements ${e.interfaces.join(' & ')}` : '';
  return `${keyword} ${e.name}${impl} {\n${lines.join('\n')}\n}`;
}

function filterFields(f: FieldModel, model: SchemaModel): string[] {
  const out: string[] = [];
  if (f.derivedFrom) return [`${f.name}_: ${f.type}_filter`];
  if (f.list) {
    const el = f.ref ? 'String' : f.type;
    const sfx = [...LIST_SUFFIXES, ...(el === 'String' ? LIST_NOCASE : [])];
    for (const s of sfx) out.push(`${f.name}${s}: [${el}!]`);
    if (f.ref) out.push(`${f.name}_: ${f.type}_filter`);
    return out;
  }
  if (f.ref) {
    if (!model.byName.has(f.type) && !model.interfaces?.has(f.type))
      throw new Error(`field ${f.name} references unknown entity ${f.type}`);
    for (const s of SUFFIXES.String!) out.push(`${f.name}${s}: ${s.endsWith('_in') ? '[String!]' : 'String'}`);
    out.push(`${f.name}_: ${f.type}_filter`);
    return out;
  }
  // Enums: "", `_not`, `_in`, `_not_in` (graph-node `api.rs` `field_enum_filter_input_values`).
  const sfx = f.enum ? [...EQ, '_in', '_not_in'] : (SUFFIXES[f.type] ?? EQ);
  for (const s of sfx) out.push(`${f.name}${s}: ${s.endsWith('_in') ? `[${f.type}!]` : f.type}`);
  return out;
}

function filterType(e: EntityModel, model: SchemaModel, changeBlock: boolean): string {
  const lines = e.fields.flatMap((f) => filterFields(f, model));
  lines.push(
    ...(changeBlock ? ['_change_block: BlockChangedFilter'] : []),
    `and: [${e.name}_filter]`,
    `or: [${e.name}_filter]`,
  );
  return `input ${e.name}_filter {\n  ${lines.join('\n  ')}\n}`;
}

/** Enum values of `<Entity>_orderBy`: every field, plus `parent__child` for non-list references and scalar children. */
export function orderByValues(e: EntityModel, model: SchemaModel): string[] {
  const values: string[] = [];
  for (const f of e.fields) {
    values.push(f.name);
    if (!f.ref || f.list || f.derivedFrom) continue;
    const child = model.byName.get(f.type);
    for (const c of child?.fields ?? []) if (!c.ref && !c.list) values.push(`${f.name}__${c.name}`);
  }
  return values;
}

function queryFields(e: EntityModel, naming: NamingMode): string[] {
  const block = 'block: Block_height, subgraphError: _SubgraphErrorPolicy_! = deny';
  const names = rootNames(e.name, naming);
  return [
    ...(names.single ? [`  ${names.single}(id: ID!, ${block}): ${e.name}`] : []),
    `  ${names.plural}(${collectionArgs(e.name)}, ${block}): [${e.name}!]!`,
  ];
}

/** Filter suffixes of an aggregation's fields (graph-node `api.rs` `field_filter_ops`, `FilterOpsSet::Aggregation`). */
const AGG_SUFFIXES = ['', '_gt', '_lt', '_gte', '_lte', '_in'];
const AGG_ORDERED = new Set(['BigInt', 'BigDecimal', 'Int', 'Int8', 'Timestamp']);

/**
 * The filter of an aggregation: ordered scalars take `""`, `_gt`, `_lt`, `_gte`, `_lte` and `_in`, other scalars and
 * references equality only (a reference also its child filter), enums and lists as an entity's do.
 */
function aggregationFilterType(agg: EntityModel, model: SchemaModel, changeBlock: boolean): string {
  const lines = agg.fields.flatMap((f) => {
    if (f.list || f.enum) return filterFields(f, model);
    if (f.ref) return [`${f.name}: String`, `${f.name}_: ${f.type}_filter`];
    const sfx = AGG_ORDERED.has(f.type) ? AGG_SUFFIXES : [''];
    return sfx.map((s) => `${f.name}${s}: ${s === '_in' ? `[${f.type}!]` : f.type}`);
  });
  lines.push(
    ...(changeBlock ? ['_change_block: BlockChangedFilter'] : []),
    `and: [${agg.name}_filter]`,
    `or: [${agg.name}_filter]`,
  );
  return `input ${agg.name}_filter {\n  ${lines.join('\n  ')}\n}`;
}

/**
 * The root field of an aggregation (graph-node `api.rs` `query_fields_for_agg_type`): its plural only, with a
 * mandatory `interval` and no `orderBy` (rows come by `timestamp` then `id`, descending).
 */
function aggregationQueryField(agg: EntityModel, naming: NamingMode): string {
  const args = `skip: Int = 0, first: Int = 100, interval: Aggregation_interval!, where: ${agg.name}_filter`;
  const block = 'block: Block_height, subgraphError: _SubgraphErrorPolicy_! = deny';
  return `  ${rootNames(agg.name, naming).plural}(${args}, ${block}): [${agg.name}!]!`;
}

/**
 * Root fields, the first of each name: graph-node names them from their types (`Stat`'s plural and `Stats`' singular
 * are both `stats`) and keeps both in its `Query` type, where a field is found by name and the first one answers
 * (`add_query_type`, graph/src/schema/api.rs at f27eb5f).
 */
function firstOfEachName(fields: readonly string[]): string[] {
  const seen = new Set<string>();
  return fields.filter((f) => {
    const name = /^\s*(\w+)/.exec(f)![1]!;
    if (seen.has(name)) return false;
    seen.add(name);
    return true;
  });
}

/** How a deployment's API schema differs: root field naming, and whether filters take `_change_block`. */
export interface ApiOptions {
  readonly naming: NamingMode;
  readonly changeBlock: boolean;
}

/** The SDL of the graph-node API schema for an entity schema, with root fields named as `naming` says. */
export function apiSdl(model: SchemaModel, opts: ApiOptions = { naming: 'current', changeBlock: true }): string {
  const parts = [PRELUDE, ...(opts.changeBlock ? ['input BlockChangedFilter { number_gte: Int! }'] : [])];
  // graph-node keeps an enum's values as a set (`EnumMap`, graph/src/schema/input/mod.rs at f27eb5f): one repeated counts once.
  for (const [name, values] of model.enums ?? []) parts.push(`enum ${name} { ${[...new Set(values)].join(' ')} }`);
  // Interface types, with their filters, orders and root fields, as graph-node's `add_types_for_interface_types`.
  const interfaces = [...(model.interfaces?.keys() ?? [])].map((name) => interfaceEntity(model, name)!);
  for (const i of interfaces)
    parts.push(
      objectType(i, 'interface'),
      filterType(i, model, opts.changeBlock),
      `enum ${i.name}_orderBy { ${orderByValues(i, model).join(' ')} }`,
    );
  for (const e of model.entities) {
    parts.push(
      objectType(e),
      filterType(e, model, opts.changeBlock),
      `enum ${e.name}_orderBy { ${orderByValues(e, model).join(' ')} }`,
    );
  }
  const aggregations = model.aggregations ?? [];
  if (aggregations.length) parts.push('enum Aggregation_interval { hour day }');
  for (const agg of aggregations) parts.push(objectType(agg), aggregationFilterType(agg, model, opts.changeBlock));
  const query = [...model.entities, ...interfaces].flatMap((e) => queryFields(e, opts.naming));
  query.push(...aggregations.map((agg) => aggregationQueryField(agg, opts.naming)));
  query.push('  _meta(block: Block_height): _Meta_');
  parts.push(`type Query {\n${firstOfEachName(query).join('\n')}\n}`);
  return parts.join('\n\n');
}

/** The executable API schema (used for validation and introspection). */
export function buildApiSchema(model: SchemaModel, opts?: ApiOptions): GraphQLSchema {
  return buildSchema(apiSdl(model, opts));
}
