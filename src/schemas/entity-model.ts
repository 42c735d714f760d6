/**
 * The entities of one subgraph schema, read from its `@entity` SDL. Root query field names are not part of the model:
 * graph-node derives them by a rule that changed between versions, so the exporter reads them from each endpoint's
 * introspection (`upstream/endpoint-probe.ts`) and the sandbox names them per deployment profile (`sandbox/naming.ts`).
 */
import { readFileSync } from 'node:fs';
import {
  type ConstDirectiveNode,
  type DocumentNode,
  type FieldDefinitionNode,
  type GraphQLError,
  Kind,
  parse,
  type TypeNode,
} from 'graphql';

/** Scalar types a subgraph field can have. */
export type ScalarType = 'ID' | 'String' | 'Bytes' | 'BigInt' | 'BigDecimal' | 'Int' | 'Int8' | 'Boolean' | 'Timestamp';

const SCALARS = new Set<string>([
  'ID',
  'String',
  'Bytes',
  'BigInt',
  'BigDecimal',
  'Int',
  'Int8',
  'Boolean',
  'Timestamp',
]);

/** How an aggregation field is computed from its source (`@aggregate(fn: "sum", arg: "amount")`). */
export interface AggregateModel {
  readonly fn: string;
  readonly arg?: string;
  readonly cumulative: boolean;
}

/**
 * One field of an entity. `type` is a scalar name, an enum's name (`enum` true), or an entity's or interface's name
 * (`ref` true).
 */
export interface FieldModel {
  readonly name: string;
  readonly type: string;
  readonly ref: boolean;
  readonly list: boolean;
  readonly nonNull: boolean;
  /** The type is an enum of the schema: stored and sent as its value's name. */
  readonly enum?: boolean;
  /** For `@derivedFrom(field: …)`: the field of the referenced entity that points back here. */
  readonly derivedFrom?: string;
  /** An aggregation's computed field. */
  readonly aggregate?: AggregateModel;
}

/** One entity type (an `@entity` object), or an aggregation (`@aggregation`). */
export interface EntityModel {
  readonly name: string;
  readonly fields: readonly FieldModel[];
  readonly field: ReadonlyMap<string, FieldModel>;
  /** `@entity(immutable: true)`, and every timeseries: rows are written once and never change. */
  readonly immutable?: boolean;
  /** `@entity(timeseries: true)`: an `Int8` id the store assigns, a `timestamp`, immutable. */
  readonly timeseries?: boolean;
  /** For an aggregation: its source timeseries and its intervals (`hour`, `day`). */
  readonly aggregation?: { readonly source: string; readonly intervals: readonly string[] };
  /** The interfaces it implements. */
  readonly interfaces?: readonly string[];
}

/** An interface: its fields, and the entities that implement it. */
export interface InterfaceModel {
  readonly name: string;
  readonly fields: readonly FieldModel[];
  readonly implementers: readonly string[];
}

/** The entities of one schema, by type name. */
export interface SchemaModel {
  readonly name: string;
  /** The stored entities (`@entity`, timeseries included), in the schema's order. */
  readonly entities: readonly EntityModel[];
  readonly byName: ReadonlyMap<string, EntityModel>;
  /** Enums by name: their values in order. */
  readonly enums?: ReadonlyMap<string, readonly string[]>;
  readonly interfaces?: ReadonlyMap<string, InterfaceModel>;
  /** Aggregations (`@aggregation`): computed by graph-node from a timeseries, queried per interval. */
  readonly aggregations?: readonly EntityModel[];
}

/** The `[Token!]!` style text of a field's type, as the schema declares it. */
export function fieldTypeText(f: FieldModel): string {
  const inner = f.list ? `[${f.type}!]` : f.type;
  return f.nonNull ? `${inner}!` : inner;
}

/** A schema that cannot be read: names the type and field at fault, and the fix. */
export class SchemaModelError extends Error {
  override readonly name = 'SchemaModelError';
}

/** Lower camel case with a leading run of capitals lowered, except the one starting the next word (`DPPOracle` → `dppOracle`). */
export function lowerCamel(name: string): string {
  const run = /^[A-Z]+/.exec(name)?.[0] ?? '';
  if (run.length <= 1) return name.charAt(0).toLowerCase() + name.slice(1);
  const keep = run.length < name.length ? run.length - 1 : run.length;
  return name.slice(0, keep).toLowerCase() + name.slice(keep);
}

/** English plural of an entity name (`history` → `histories`, `data` → `datas`, `earnings` → `earnings`). */
export function pluralize(word: string): string {
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(word)) return /ings$|s$/.test(word) ? word : `${word}es`;
  return `${word}s`;
}

function unwrap(node: TypeNode): { type: string; list: boolean; nonNull: boolean } {
  let nonNull = false;
  let list = false;
  let t = node;
  if (t.kind === Kind.NON_NULL_TYPE) {
    nonNull = true;
    t = t.type;
  }
  if (t.kind === Kind.LIST_TYPE) {
    list = true;
    t = t.type.kind === Kind.NON_NULL_TYPE ? t.type.type : t.type;
  }
  if (t.kind !== Kind.NAMED_TYPE) throw new SchemaModelError('nested lists are not supported in entity schemas');
  return { type: t.name.value, list, nonNull };
}

type Directives = readonly ConstDirectiveNode[] | undefined;

/** The value of a directive's argument, as text, a boolean or a list of texts. */
function directiveArg(dirs: Directives, directive: string, arg: string): string | boolean | string[] | undefined {
  const v = dirs?.find((d) => d.name.value === directive)?.arguments?.find((a) => a.name.value === arg)?.value;
  if (!v) return undefined;
  if (v.kind === Kind.STRING || v.kind === Kind.ENUM) return v.value;
  if (v.kind === Kind.BOOLEAN) return v.value;
  if (v.kind === Kind.LIST) return v.values.map((x) => (x.kind === Kind.STRING || x.kind === Kind.ENUM ? x.value : ''));
  return undefined;
}

const hasDirective = (dirs: Directives, name: string) => dirs?.some((d) => d.name.value === name) ?? false;

function fieldModel(node: FieldDefinitionNode, kinds: { enums: ReadonlySet<string> }): FieldModel {
  const { type, list, nonNull } = unwrap(node.type);
  const derivedFrom = directiveArg(node.directives, 'derivedFrom', 'field');
  const isEnum = kinds.enums.has(type);
  const fn = directiveArg(node.directives, 'aggregate', 'fn');
  const arg = directiveArg(node.directives, 'aggregate', 'arg');
  return {
    name: node.name.value,
    type,
    ref: !SCALARS.has(type) && !isEnum,
    list,
    nonNull,
    ...(isEnum ? { enum: true } : {}),
    ...(typeof derivedFrom === 'string' ? { derivedFrom } : {}),
    ...(typeof fn === 'string'
      ? {
          aggregate: {
            fn,
            ...(typeof arg === 'string' ? { arg } : {}),
            cumulative: directiveArg(node.directives, 'aggregate', 'cumulative') === true,
          },
        }
      : {}),
  };
}

const SCALAR_LIST = [...SCALARS].join(', ');

/**
 * Parses a subgraph's `schema.graphql` into a schema model: its `@entity` types (immutable and timeseries ones
 * marked), `@aggregation` types, enums and interfaces. A type a field names that is none of graph-node's scalars, an
 * enum, an entity or an interface of the schema is an error naming the field, as is SDL that does not parse.
 */
export function parseSchemaModel(name: string, sdl: string): SchemaModel {
  let doc: DocumentNode;
  try {
    doc = parse(sdl);
  } catch (e) {
    // graphql's GraphQLError: where in the text, then what (its message, whose own location is only in `locations`).
    const at = (e as GraphQLError).locations?.[0];
    const where = at ? ` at line ${at.line}, column ${at.column}` : '';
    throw new SchemaModelError(`the schema of ${name} does not parse${where}: ${(e as Error).message}`);
  }
  const enums = new Map<string, string[]>();
  for (const def of doc.definitions)
    if (def.kind === Kind.ENUM_TYPE_DEFINITION)
      enums.set(
        def.name.value,
        (def.values ?? []).map((v) => v.name.value),
      );
  const kinds = { enums: new Set(enums.keys()) };
  const entities: EntityModel[] = [];
  const aggregations: EntityModel[] = [];
  const interfaceDefs: { name: string; fields: FieldModel[] }[] = [];
  for (const def of doc.definitions) {
    if (def.kind === Kind.INTERFACE_TYPE_DEFINITION) {
      interfaceDefs.push({ name: def.name.value, fields: (def.fields ?? []).map((f) => fieldModel(f, kinds)) });
      continue;
    }
    if (def.kind !== Kind.OBJECT_TYPE_DEFINITION) continue;
    const fields = (def.fields ?? []).map((f) => fieldModel(f, kinds));
    const base = { name: def.name.value, fields, field: new Map(fields.map((f) => [f.name, f])) };
    const dirs = def.directives;
    if (hasDirective(dirs, 'aggregation')) {
      const source = directiveArg(dirs, 'aggregation', 'source');
      const intervals = directiveArg(dirs, 'aggregation', 'intervals');
      if (typeof source !== 'string' || !Array.isArray(intervals) || intervals.length === 0)
        throw new SchemaModelError(
          `aggregation ${def.name.value} of ${name} needs @aggregation(source: "<timeseries>", intervals: ["hour", "day"])`,
        );
      aggregations.push({ ...base, immutable: true, aggregation: { source, intervals } });
      continue;
    }
    // Graph-node's own types (`Query`, `Subscription`) and plain objects without @entity are not stored.
    if (!hasDirective(dirs, 'entity')) continue;
    const timeseries = directiveArg(dirs, 'entity', 'timeseries') === true;
    const immutable = timeseries || directiveArg(dirs, 'entity', 'immutable') === true;
    const interfaces = (def.interfaces ?? []).map((i) => i.name.value);
    entities.push({
      ...base,
      ...(immutable ? { immutable } : {}),
      ...(timeseries ? { timeseries } : {}),
      ...(interfaces.length ? { interfaces } : {}),
    });
  }
  const interfaces = new Map(
    interfaceDefs.map((i) => [
      i.name,
      { ...i, implementers: entities.filter((e) => e.interfaces?.includes(i.name)).map((e) => e.name) },
    ]),
  );
  const byName = new Map(entities.map((e) => [e.name, e]));
  for (const e of [...entities, ...aggregations, ...interfaceDefs])
    for (const f of e.fields) {
      if (!f.ref) continue;
      if (byName.has(f.type) || interfaces.has(f.type) || aggregations.some((a) => a.name === f.type)) continue;
      throw new SchemaModelError(
        `field ${e.name}.${f.name} of ${name} has type ${f.type}, which is neither a scalar of graph-node (${SCALAR_LIST}) nor an entity, enum or interface of the schema: correct the type, or add its definition to the schema`,
      );
    }
  return {
    name,
    entities,
    byName,
    ...(enums.size ? { enums } : {}),
    ...(interfaces.size ? { interfaces } : {}),
    ...(aggregations.length ? { aggregations } : {}),
  };
}

/** A copy of a model without some entities (a deployment that lacks them, as older deployments do). */
export function withoutEntities(model: SchemaModel, omit: ReadonlySet<string>): SchemaModel {
  if (!omit.size) return model;
  const entities = model.entities.filter((e) => !omit.has(e.name));
  return { name: model.name, entities, byName: new Map(entities.map((e) => [e.name, e])) };
}

/** Schema file names by canonical schema name. */
export const SCHEMA_FILES: Readonly<Record<string, string>> = {
  dodoex: 'dodoex.graphql',
  token: 'token.graphql',
  mine: 'mine.graphql',
};

/** The canonical subgraph schema names. */
export const SUBGRAPH_SCHEMAS = ['dodoex', 'token', 'mine'] as const;

/** Other spellings of schema names that users and the upstream use: the seed document's `exchange`, the hosted `mine-v3`. */
export const SCHEMA_ALIASES: Readonly<Record<string, string>> = {
  dodoex: 'dodoex',
  exchange: 'dodoex',
  token: 'token',
  mine: 'mine',
  'mine-v3': 'mine',
};

/** The canonical schema name for a typed one, or undefined. */
export function canonicalSchema(name: string): string | undefined {
  return SCHEMA_ALIASES[name];
}

/** Loads the entity model of a canonical schema name (`dodoex`, `token`, `mine`). */
export function loadSchemaModel(schema: string): SchemaModel {
  const file = SCHEMA_FILES[schema];
  if (!file) throw new Error(`unknown schema ${schema}`);
  return parseSchemaModel(schema, readFileSync(new URL(`../../src/schemas/${file}`, import.meta.url), 'utf8'));
}
