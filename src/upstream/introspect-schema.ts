/**
 * A subgraph's entity schema recovered from its endpoint's introspection, for `pool-export subgraph add` without
 * `--schema`. graph-node's API schema is generated from the entity schema (graphprotocol/graph-node f27eb5f2,
 * `graph/src/schema/api.rs`), and can be read back from it:
 * - an entity is an object type with a `<Type>_filter` input (graph-node's own `_Meta_` and `_Block_` have none);
 * - a field `@derivedFrom` another entity has only the child filter `field_` in that input, where a stored field has
 *   its equality filter `field` (the `filter_type_defn` rules of `api.rs`; graph-node-semantics.md §1.3);
 * - an aggregation is queried with an `interval` argument; it is left out, since introspection does not show which
 *   intervals it has (`Aggregation_interval` lists every interval graph-node knows): `--schema FILE` exports it.
 * What introspection cannot show: whether an entity is immutable (every entity is read as a mutable one, by
 * `_change_block`, which is exact either way), and the field a derived field is derived from (`?` here).
 */
import {
  buildClientSchema,
  GraphQLEnumType,
  type GraphQLField,
  GraphQLInputObjectType,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLOutputType,
  getIntrospectionQuery,
  type IntrospectionQuery,
} from 'graphql';

/** The introspection query to send. */
export const INTROSPECTION_QUERY = getIntrospectionQuery({ descriptions: false });

/** graph-node's own types, never entities. */
const OWN = new Set(['Query', 'Subscription', '_Meta_', '_Block_']);

function typeText(t: GraphQLOutputType): { text: string; named: string } {
  if (t instanceof GraphQLNonNull) {
    const inner = typeText(t.ofType);
    return { text: `${inner.text}!`, named: inner.named };
  }
  if (t instanceof GraphQLList) {
    const inner = typeText(t.ofType);
    return { text: `[${inner.text}]`, named: inner.named };
  }
  return { text: t.name, named: t.name };
}

/** The entity SDL of an endpoint's introspection answer (`data` of `INTROSPECTION_QUERY`). */
export function sdlFromIntrospection(data: IntrospectionQuery): string {
  const api = buildClientSchema(data);
  const types = api.getTypeMap();
  const query = api.getQueryType();
  // Aggregations: the types of root fields that take `interval`.
  const aggregations = new Set(
    Object.values(query?.getFields() ?? {})
      .filter((f) => f.args.some((a) => a.name === 'interval'))
      .map((f) => typeText(f.type).named),
  );
  const isEntity = (name: string) =>
    !OWN.has(name) &&
    !name.startsWith('__') &&
    !aggregations.has(name) &&
    types[`${name}_filter`] instanceof GraphQLInputObjectType &&
    (types[name] instanceof GraphQLObjectType || types[name] instanceof GraphQLInterfaceType);
  const enums = new Set<string>();
  const interfaces = new Set<string>();
  const out: string[] = [
    '# Read from the endpoint by introspection (pool-export subgraph add): entities are marked mutable, and',
    '# @derivedFrom(field: "?") marks a derived field, whose source field introspection does not show.',
  ];
  const fieldsOf = (name: string, fields: Record<string, GraphQLField<unknown, unknown>>) => {
    const input = types[`${name}_filter`];
    const filter = input instanceof GraphQLInputObjectType ? input.getFields() : {};
    const lines: string[] = [];
    for (const f of Object.values(fields)) {
      const { text, named } = typeText(f.type);
      if (aggregations.has(named)) continue;
      const t = types[named];
      if (t instanceof GraphQLEnumType) enums.add(named);
      const derived = !(f.name in filter) && `${f.name}_` in filter;
      lines.push(`  ${f.name}: ${text}${derived ? ' @derivedFrom(field: "?")' : ''}`);
    }
    return lines;
  };
  for (const [name, t] of Object.entries(types)) {
    if (!(t instanceof GraphQLObjectType) || !isEntity(name)) continue;
    const impl = t.getInterfaces().map((i) => i.name);
    for (const i of impl) interfaces.add(i);
    out.push(
      `type ${name}${impl.length ? ` implements ${impl.join(' & ')}` : ''} @entity {`,
      ...fieldsOf(name, t.getFields()),
      '}',
    );
  }
  for (const name of interfaces) {
    const t = types[name] as GraphQLInterfaceType;
    out.push(`interface ${name} {`, ...fieldsOf(name, t.getFields()), '}');
  }
  for (const name of enums) {
    const t = types[name] as GraphQLEnumType;
    out.push(`enum ${name} {`, ...t.getValues().map((v) => `  ${v.name}`), '}');
  }
  return `${out.join('\n')}\n`;
}
