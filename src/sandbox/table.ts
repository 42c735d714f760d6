/** The seam between the query engine and the generated data: a table of rows as of one block. */
import type { EntityModel } from '../schemas/entity-model.ts';

/** A row in wire encoding: scalars as graph-node prints them, references as ids, `__block` = block of its last change. */
export type Row = Record<string, unknown> & { id: string; __block: number };

/** Which block a query reads, and the reorg epoch that caches must key on. */
export interface View {
  readonly at: number;
  readonly epoch: number;
}

/** Direction of a scan. */
export type Direction = 'asc' | 'desc';

/** A source of rows for one entity. */
export interface Table {
  readonly entity: EntityModel;
  /** A numeric field whose value never decreases along the table's natural order; enables keyset scans. */
  readonly seq?: string;
  /**
   * Groups of rows in `seq` order (each group shares one `seq` value, any id order), from the first group at or
   * after `from` (asc) or at or before `from` (desc). Tables without `seq` yield all rows as one group.
   */
  groups(view: View, dir: Direction, from?: number): Iterable<readonly Row[]>;
  /** One row by id, as of the view. */
  get(id: string, view: View): Row | undefined;
  /**
   * Every row in id order (byte-wise, in `dir`), starting at or before the first row that can satisfy a bound on the
   * id (`after`: rows above it for asc, below it for desc). Large tables have it so that id-ordered pages need no scan.
   */
  byId?(view: View, dir: Direction, after?: string): Iterable<Row>;
}

/** Every row of a table as of a view, in its natural order. */
export function allRows(table: Table, view: View): Row[] {
  return [...table.groups(view, 'asc')].flat();
}

/** A table with a handful of rows computed at once; the list is cached per view. */
export function materializedTable(entity: EntityModel, build: (view: View) => Row[]): Table {
  let cacheAt = Number.NaN;
  let cacheEpoch = Number.NaN;
  let cacheRows: Row[] = [];
  let cacheIndex = new Map<string, Row>();
  const load = (view: View): Row[] => {
    if (view.at !== cacheAt || view.epoch !== cacheEpoch) {
      cacheRows = build(view);
      cacheIndex = new Map(cacheRows.map((r) => [r.id, r]));
      cacheAt = view.at;
      cacheEpoch = view.epoch;
    }
    return cacheRows;
  };
  return {
    entity,
    groups: (view) => [load(view)],
    get: (id, view) => {
      load(view);
      return cacheIndex.get(id);
    },
  };
}
