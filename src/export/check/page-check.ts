/**
 * Checks one answer holding a page of a dataset's rows, from its body as it came, and keeps the rows for a batch: every
 * value is checked as `mapPage` checks it, and the rows' JSON text is written to a file unchanged, for DuckDB to read
 * (see `store/ddl.ts`, `insertParts`). Pure but for that one file; the page worker runs it off the main thread.
 */
import { writeFileSync } from 'node:fs';
import type { Dataset } from '../../catalog/catalog.ts';
import { findLongLists, type LongList } from '../long-lists.ts';
import { checkPage } from '../mapper.ts';

/** How a compact answer that holds a page's rows and nothing else begins and ends (graph-node writes answers so). */
const PAGE_HEAD = '{"data":{"rows":[';
const PAGE_TAIL = ']}}';

/** One upstream row as the pagers read it: its id and the fields of its keyset. */
export type PageRow = Record<string, unknown> & { id: string };

/** A page checked and kept: what the task needs of its rows, without the rows themselves. */
export interface CheckedPage {
  /** Rows in the page. */
  readonly count: number;
  /** Their ids, in order (a task's buffer holds each id once). */
  readonly ids: readonly string[];
  /** The first and the last row (the pagers' cursors), absent from an empty page. */
  readonly first?: PageRow;
  readonly last?: PageRow;
  /** Length of the kept text (UTF-16 code units, as JavaScript counts): no row of it is longer. */
  readonly length: number;
  /** Rows whose list of references came as long as a page asks for: they may hold more (`long-lists.ts`). */
  readonly longLists?: readonly LongList[];
}

/** The answer to check, and the file its rows go to. */
export interface PageToCheck {
  readonly ds: Dataset;
  readonly chainId: number;
  /** The answer's body, UTF-8, as it came. */
  readonly body: Uint8Array;
  readonly file: string;
}

/** `{ "data": { "rows": [...] } }` and nothing else: the answer of a page query that succeeded. */
function rowsOf(v: unknown): unknown[] | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const keys = Object.keys(v);
  if (keys.length !== 1 || keys[0] !== 'data') return undefined;
  const data = (v as { data: unknown }).data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  const inner = Object.keys(data);
  if (inner.length !== 1 || inner[0] !== 'rows') return undefined;
  const rows = (data as { rows: unknown }).rows;
  return Array.isArray(rows) ? rows : undefined;
}

/**
 * Checks a page answer and writes its rows (a JSON array of entities) to `file`. Undefined when the answer is not a
 * page of rows and nothing else (not JSON, GraphQL errors, another shape): the caller judges it as any answer. Throws a
 * GarbageError naming the first value of the wrong type or out of range; nothing is written then.
 *
 * The rows are written as they came when the answer is compact (then they are exactly the text between the answer's
 * head and tail), else as JSON.stringify writes them. DuckDB reads the values checked here: it refuses an object with
 * a repeated key (which JSON.parse would have read as its last value), and malformed JSON.
 */
export function checkPageAnswer(page: PageToCheck): CheckedPage | undefined {
  const text = Buffer.from(page.body.buffer, page.body.byteOffset, page.body.byteLength).toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const items = rowsOf(parsed);
  if (!items) return undefined;
  checkPage(page.ds, page.chainId, items);
  const rows =
    text.startsWith(PAGE_HEAD) && text.endsWith(PAGE_TAIL)
      ? text.slice(PAGE_HEAD.length - 1, text.length - PAGE_TAIL.length + 1)
      : JSON.stringify(items);
  writeFileSync(page.file, rows);
  const ids = items.map((r) => (r as PageRow).id);
  const ends = items.length ? { first: items[0] as PageRow, last: items[items.length - 1] as PageRow } : {};
  const longLists = findLongLists(page.ds, items);
  return { count: items.length, ids, ...ends, length: rows.length, ...(longLists.length ? { longLists } : {}) };
}
