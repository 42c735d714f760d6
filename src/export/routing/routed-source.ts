/**
 * A task's pages (`fetchPage`): each request routed as `RoutedRequests` routes it (retries, page halving, failover, the
 * floor of a deployment that prunes), the answer checked by the page checker and kept in a file of the sink, and the
 * rest of any long list of references read at the page's block.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { KeptPage } from '../../store/batch.ts';
import type { CheckedPage, PageRow } from '../check/page-check.ts';
import {
  appendRest,
  findLongLists,
  LIST_PAGE,
  type ListRest,
  type LongList,
  listColumn,
  restItems,
  restQuery,
} from '../long-lists.ts';
import { garbage } from '../mapper.ts';
import { type PageShape, pageQuery } from '../queries.ts';
import { RoutedRequests } from './routed-requests.ts';

/** An upstream row: every entity has an id. */
export type Row = PageRow;

/**
 * A page fetched and checked: kept in a file of the sink (with its ids), or, for an answer the page checker did not
 * take, its rows.
 */
export interface FetchedPage extends Partial<Pick<CheckedPage, 'ids'>> {
  readonly count: number;
  readonly first?: Row;
  readonly last?: Row;
  readonly kept?: KeptPage;
  readonly rows?: unknown[];
}

/** A task's requests and pages on its route, and the routes it may move to. */
export class RoutedSource extends RoutedRequests {
  /** The page size asked for now; a shorter page is the last. */
  get size(): number {
    return this.pageSize;
  }

  /**
   * Fetches one page of the dataset's rows, checked, without buffering it. A page answer is checked by the page checker
   * and kept in a file of the sink; an answer that is not a page of rows alone (another shape, errors) is judged as
   * any answer, and its rows mapped here.
   */
  async fetchPage(shape: PageShape, vars: Record<string, unknown>): Promise<FetchedPage> {
    const { ds, task, deps } = this;
    return this.withRoutes(pageQuery(ds, this.pin.root, shape), vars, async (q, v) => {
      const { body, bytes, requests, indexed } = await deps.source.requestBody(this.endpoint, q, v);
      const cost = {
        bytes,
        ...(requests !== undefined ? { requests } : {}),
        ...(indexed !== undefined ? { indexed } : {}),
      };
      const file = deps.sink.pageFile();
      const checked = await deps.checker.check({ ds, chainId: task.chainId, body, file });
      if ('page' in checked) {
        const { longLists, ...page } = checked.page;
        if (!longLists) return { ...page, kept: { file, length: page.length }, ...cost };
        // Rare: a row's list of references goes on past the page's first items; the kept rows get the rest.
        const kept = JSON.parse(readFileSync(file, 'utf8')) as unknown[];
        appendRest(kept, await this.readRest(longLists, Number(v.block)));
        const text = JSON.stringify(kept);
        writeFileSync(file, text);
        return { ...page, length: text.length, kept: { file, length: text.length }, ...cost };
      }
      const rows = deps.source.answerData<{ rows: unknown }>(this.endpoint, checked.body).rows;
      if (!Array.isArray(rows))
        throw garbage(
          { ds, chainId: task.chainId, field: 'rows' },
          `expected a list of ${ds.entity} rows, got ${String(JSON.stringify(rows)).slice(0, 80)}`,
        );
      appendRest(rows, await this.readRest(findLongLists(ds, rows), Number(v.block)));
      const ends = rows.length ? { first: rows[0] as Row, last: rows[rows.length - 1] as Row } : {};
      return { count: rows.length, rows, ...ends, ...cost };
    });
  }

  /**
   * The rest of each long list of references at the page's block, by id keyset (`long-lists.ts`), each request with
   * the retries and failover of a page.
   */
  private async readRest(lists: readonly LongList[], block: number): Promise<ListRest[]> {
    const out: ListRest[] = [];
    for (const list of lists) {
      const ids: string[] = [];
      const query = restQuery(this.ds, this.pin.root, listColumn(this.ds, list.field));
      for (let after = list.after; ; ) {
        const more = await this.withRoutes(query, { block, id: list.id, after }, async (q, v) => {
          const { body, bytes } = await this.deps.source.requestBody(this.endpoint, q, { ...v, first: 1 });
          return { items: restItems(this.deps.source.answerData(this.endpoint, body), list), bytes };
        });
        ids.push(...more.items);
        if (more.items.length < LIST_PAGE) break;
        after = more.items[more.items.length - 1]!;
      }
      out.push({ id: list.id, field: list.field, ids });
    }
    return out;
  }
}
