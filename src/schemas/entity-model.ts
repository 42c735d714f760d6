/** The entities of one subgraph schema, read from its `@entity` SDL, with graph-node's root field names. */
import { readFileSync } from 'node:fs';
import { Kind, parse, type FieldDefinitionNode, type TypeNode } from 'graphql';

/** Scalar types a subgraph field can have. */
export type ScalarType = 'ID' | 'String' | 'Bytes' | 'BigInt' | 'BigDecimal' | 'Int' | 'Int8' | 'Boolean' | 'Timestamp';

const SCALARS = new Set<string>(['ID', 'String', 'Bytes', 'BigInt', 'BigDecimal', 'Int', 'Int8', 'Boolean', 'Timestamp']);

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

/** One entity type with its root query field names. */
export interface EntityModel {
  readonly name: string;
  readonly fields: readonly FieldModel[];
  readonly field: ReadonlyMap<string, FieldModel>;
  /** Root field for one entity by id, e.g. `swap`. */
  readonly single: string;
  /** Root field for the collection, e.g. `swaps`; `<single>_collection` when the plural equals the singular. */
  readonly plural: string;
}

/** The entities of one schema, by type name and by root field name. */
export interface SchemaModel {
  readonly name: string;
  readonly entities: readonly EntityModel[];
  readonly byName: ReadonlyMap<string, EntityModel>;
  readonly byRoot: ReadonlyMap<string, { entity: EntityModel; many: boolean }>;
}

/** graph-node's lower camel case: a leading run of capitals is lowered, except the one starting the next word. */
export function lowerCamel(name: string): string {
  const run = /^[A-Z]+/.exec(name)?.[0] ?? '';
  if (run.length <= 1) return name.charAt(0).toLowerCase() + name.slice(1);
  const keep = run.length < name.length ? run.length - 1 : run.length;
  return name.slice(0, keep).toLowerCase() + name.slice(keep);
}

/** English plural as graph-node's inflector forms it for entity names (`history` → `histories`, `data` → `datas`). */
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
  return { name: node.name.value, type, ref: !SCALARS.has(type), list, nonNull, ...(derivedFrom ? { derivedFrom } : {}) };
}

/** Parses `@entity` SDL into a schema model. */
export function parseSchemaModel(name: string, sdl: string): SchemaModel {
  const doc = parse(sdl);
  const entities: EntityModel[] = [];
  for (const def of doc.definitions) {
    if (def.kind !== Kind.OBJECT_TYPE_DEFINITION) continue;
    const fields = (def.fields ?? []).map(fieldModel);
    const single = lowerCamel(def.name.value);
    const plural = pluralize(single) === single ? `${single}_collection` : pluralize(single);
    entities.push({ name: def.name.value, fields, field: new Map(fields.map((f) => [f.name, f])), single, plural });
  }
  const byRoot = new Map<string, { entity: EntityModel; many: boolean }>();
  for (const e of entities) {
    byRoot.set(e.single, { entity: e, many: false });
    byRoot.set(e.plural, { entity: e, many: true });
  }
  return { name, entities, byName: new Map(entities.map((e) => [e.name, e])), byRoot };
}

/** Schema file names by canonical schema name. */
export const SCHEMA_FILES: Readonly<Record<string, string>> = { dodoex: 'dodoex.graphql', token: 'token.graphql', 'mine-v3': 'mine.graphql' };

/** Loads the entity model of a canonical schema name (`dodoex`, `token`, `mine-v3`). */
export function loadSchemaModel(schema: string): SchemaModel {
  const file = SCHEMA_FILES[schema];
  if (!file) throw new Error(`unknown schema ${schema}`);
  return parseSchemaModel(schema, readFileSync(new URL(`./${file}`, import.meta.url), 'utf8'));
}
