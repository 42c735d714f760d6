/**
 * Lists of references longer than a page asks for. A page selects each list of references as its first `NESTED_FIRST`
 * items by id (`catalog/column.ts`): graph-node answers a nested collection with its default `first` of 100 otherwise,
 * and silently cuts the rest. A row whose list came with `NESTED_FIRST` items may hold more: the rest is read by id
 * keyset, `LIST_PAGE` items a request, at the page's pinned block, and appended. One more request per 1,000 items past
 * the first 101 of a list; lists of 100 or fewer cost nothing more.
 */
import type { Column, Dataset } from '../catalog/catalog.ts';
import { isRefList, NESTED_FIRST } from '../catalog/column.ts';
import { idType } from './queries.ts';

/** Items of a list asked for per request past its first ones (graph-node's largest `first`). */
export const LIST_PAGE = 1000;

/** A row whose list of references may go on: its id, the field, and the last id it holds. */
export interface LongList {
  readonly id: string;
  readonly field: string;
  readonly after: string;
}

/** The lists of references of a page's rows that came as long as asked (`NESTED_FIRST`), so may hold more. */
export function findLongLists(ds: Dataset, items: readonly unknown[]): LongList[] {
  const lists = ds.columns.filter((c) => c.cls === 'list' && isRefList(c));
  if (!lists.length) return [];
  const out: LongList[] = [];
  for (const item of items) {
    const row = item as Record<string, unknown>;
    for (const c of lists) {
      const v = row[c.field];
      if (!Array.isArray(v) || v.length < NESTED_FIRST) continue;
      out.push({ id: String(row.id), field: c.field, after: String((v[v.length - 1] as { id: unknown }).id) });
    }
  }
  return out;
}

/** The column of a list of references by its field. */
export function listColumn(ds: Dataset, field: string): Column {
  return ds.columns.find((c) => c.field === field && c.cls === 'list')!;
}

/**
 * The query of the rest of one row's list: the row by id at `$block`, its list's next `LIST_PAGE` items after
 * `$after` by id. Named `rows: <root>(` as every page query is, so that a failover renames its collection.
 */
export function restQuery(ds: Dataset, root: string, c: Column): string {
  return `query ListRest($first: Int!, $block: Int!, $id: ${idType(ds)}!, $after: ${c.refIdType ?? 'ID'}!) { rows: ${root}(first: $first, block: { number: $block }, where: { id: $id }) { id items: ${c.field}(first: ${LIST_PAGE}, orderBy: id, orderDirection: asc, where: { id_gt: $after }) { id } } }`;
}

/** The items of one answer of `restQuery`: the ids after the cursor, or an error naming what came instead. */
export function restItems(data: unknown, list: LongList): string[] {
  const rows = (data as { rows?: unknown } | null)?.rows;
  if (!Array.isArray(rows)) throw new Error(`expected the row ${list.id} with its ${list.field}, got no rows`);
  // The row is gone at the pinned block: it cannot be, as the page read it there; an empty answer says nothing more.
  if (rows.length === 0) return [];
  const items = (rows[0] as { items?: unknown }).items;
  if (!Array.isArray(items)) throw new Error(`expected a list in ${list.field} of row ${list.id}`);
  return items.map((x) => {
    const id = (x as { id?: unknown } | null)?.id;
    if (typeof id !== 'string') throw new Error(`expected entity references { id } in ${list.field} of row ${list.id}`);
    return id;
  });
}

/** The rest of one row's list, read past its first items. */
export interface ListRest {
  readonly id: string;
  readonly field: string;
  readonly ids: readonly string[];
}

/** Appends the rest of each long list to its row (rows as the upstream sent them: references as `{ id }`). */
export function appendRest(items: unknown[], rest: readonly ListRest[]): void {
  const byRow = new Map<string, ListRest[]>();
  for (const r of rest) if (r.ids.length) byRow.set(r.id, [...(byRow.get(r.id) ?? []), r]);
  if (!byRow.size) return;
  for (const item of items) {
    const row = item as Record<string, unknown>;
    for (const r of byRow.get(String(row.id)) ?? [])
      row[r.field] = [...(row[r.field] as unknown[]), ...r.ids.map((x) => ({ id: x }))];
  }
}
