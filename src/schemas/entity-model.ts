/**
 * The entities of one subgraph schema, read from its `@entity` SDL. Root query field names are not part of the model:
 * graph-node derives them by a rule that changed between versions, so the exporter reads them from each endpoint's
 * introspection (`upstream/endpoint-probe.ts`) and the sandbox names them per deployment profile (`sandbox/naming.ts`).
 */
import { readFileSync } from 'node:fs';
import { type FieldDefinitionNode, Kind, parse, type TypeNode } from 'graphql';

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

/** One field of an entity. `type` is a scalar name or an entity name when `ref` is true. */
export interface FieldModel {
  readonly name: string;
  readonly type: string;
  readonly ref: boolean;
  readonly list: boolean;
  readonly nonNull: boolean;
  /** For `@derivedFrom(field: …)`: the field of the referenced entity that points back here. */
  readonly derivedFrom?: string;
}

/** One entity type. */
export interface EntityModel {
  readonly name: string;
  readonly fields: readonly FieldModel[];
  readonly field: ReadonlyMap<string, FieldModel>;
}

/** The entities of one schema, by type name. */
export interface SchemaModel {
  readonly name: string;
  readonly entities: readonly EntityModel[];
  readonly byName: ReadonlyMap<string, EntityModel>;
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
  if (t.kind !== Kind.NAMED_TYPE) throw new Error('nested lists are not supported in entity schemas');
  return { type: t.name.value, list, nonNull };
}

function fieldModel(node: FieldDefinitionNode): FieldModel {
  const { type, list, nonNull } = unwrap(node.type);
  const derived = node.directives?.find((d) => d.name.value === 'derivedFrom');
  const arg = derived?.arguments?.find((a) => a.name.value === 'field')?.value;
  const derivedFrom = arg?.kind === Kind.STRING ? arg.value : undefined;
  return {
    name: node.name.value,
    type,
    ref: !SCALARS.has(type),
    list,
    nonNull,
    ...(derivedFrom ? { derivedFrom } : {}),
  };
}

/** Parses `@entity` SDL into a schema model. */
export function parseSchemaModel(name: string, sdl: string): SchemaModel {
  const doc = parse(sdl);
  const entities: EntityModel[] = [];
  for (const def of doc.definitions) {
    if (def.kind !== Kind.OBJECT_TYPE_DEFINITION) continue;
    const fields = (def.fields ?? []).map(fieldModel);
    entities.push({ name: def.name.value, fields, field: new Map(fields.map((f) => [f.name, f])) });
  }
  return { name, entities, byName: new Map(entities.map((e) => [e.name, e])) };
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
