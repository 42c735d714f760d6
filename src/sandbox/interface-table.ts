/**
 * Interfaces of a subgraph's schema as graph-node serves them: a field of an interface's type names a row of any
 * entity that implements it, and a collection of an interface holds the rows of all of them, each answered as its own
 * type (`__typename`, and the inline fragments `... on Swap` that apply to it).
 */
import type { EntityModel, SchemaModel } from '../schemas/entity-model.ts';
import { allRows, type Row, type Table } from './table.ts';

/** The key of a row's own entity in an interface's rows. */
export const TYPE_KEY = '__type';

/** An interface as an entity model of its own fields (to filter and order its rows), or undefined for another name. */
export function interfaceEntity(model: SchemaModel, name: string): EntityModel | undefined {
  const i = model.interfaces?.get(name);
  return i && { name: i.name, fields: i.fields, field: new Map(i.fields.map((f) => [f.name, f])) };
}

/** The entity a row of an interface's collection belongs to, or undefined for a row of an entity's own table. */
export function rowEntity(model: SchemaModel, row: Row): EntityModel | undefined {
  const t = row[TYPE_KEY];
  return typeof t === 'string' ? model.byName.get(t) : undefined;
}

/** The rows of an interface: those of each implementing entity's table, marked with their entity. */
export function interfaceTable(entity: EntityModel, parts: readonly (readonly [string, Table])[]): Table {
  const mark = (name: string, r: Row): Row => ({ ...r, [TYPE_KEY]: name });
  return {
    entity,
    *groups(view) {
      yield parts.flatMap(([name, t]) => allRows(t, view).map((r) => mark(name, r)));
    },
    get(id, view) {
      for (const [name, t] of parts) {
        const r = t.get(id, view);
        if (r) return mark(name, r);
      }
      return undefined;
    },
  };
}
