/**
 * What changed between the schema a subgraph was added with and the one its endpoint serves now (`pool-export subgraph
 * refresh`): entities and aggregations that came or went, and fields that came, went or changed type. Pure: the command
 * applies it to the data folder.
 */
import { type EntityModel, fieldTypeText, type SchemaModel } from '../schemas/entity-model.ts';

/** One difference, about an entity (or aggregation) or one of its fields. */
export interface SubgraphChange {
  readonly kind: 'entity-added' | 'entity-removed' | 'field-added' | 'field-removed' | 'field-retyped';
  readonly entity: string;
  readonly field?: string;
  /** The field's type before and after (`BigInt!`, `[Token!]`). */
  readonly from?: string;
  readonly to?: string;
}

/** The fields a table stores (a derived field is not stored). */
const storedFields = (e: EntityModel) => e.fields.filter((f) => !f.derivedFrom);

const everyType = (m: SchemaModel) => new Map([...m.entities, ...(m.aggregations ?? [])].map((e) => [e.name, e]));

/** The differences from `was` to `now`, in the order of `was`'s types, then the new ones. */
export function subgraphDrift(was: SchemaModel, now: SchemaModel): SubgraphChange[] {
  const before = everyType(was);
  const after = everyType(now);
  const out: SubgraphChange[] = [];
  for (const [name, e] of before) {
    const n = after.get(name);
    if (!n) {
      out.push({ kind: 'entity-removed', entity: name });
      continue;
    }
    const had = new Map(storedFields(e).map((f) => [f.name, fieldTypeText(f)]));
    const has = new Map(storedFields(n).map((f) => [f.name, fieldTypeText(f)]));
    for (const [field, from] of had) {
      const to = has.get(field);
      if (to === undefined) out.push({ kind: 'field-removed', entity: name, field, from });
      else if (to !== from) out.push({ kind: 'field-retyped', entity: name, field, from, to });
    }
    for (const [field, to] of has) if (!had.has(field)) out.push({ kind: 'field-added', entity: name, field, to });
  }
  for (const name of after.keys()) if (!before.has(name)) out.push({ kind: 'entity-added', entity: name });
  return out;
}

/** One line for a change, for people. */
export function describeChange(c: SubgraphChange): string {
  switch (c.kind) {
    case 'entity-added':
      return `${c.entity} is new: it is exported from the next run`;
    case 'entity-removed':
      return `${c.entity} is gone: it is no longer read; its table keeps the rows it has`;
    case 'field-added':
      return `${c.entity}.${c.field} (${c.to}) is new: a new column, filled as the next run reads ${c.entity} again whole`;
    case 'field-removed':
      return `${c.entity}.${c.field} (${c.from}) is gone: no longer read; its column keeps the values it has`;
    case 'field-retyped':
      return `${c.entity}.${c.field} changed type, ${c.from} → ${c.to}: read again whole from the next run`;
  }
}
