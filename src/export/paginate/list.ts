/** The liquidity list: every pool of a chain each run, as one snapshot checked against `totalCount`. */
import { LIST_PAGE_SIZE } from '../../catalog/liquidity-list.ts';
import { UpstreamError } from '../../errors.ts';
import { LIST_QUERY } from '../queries.ts';
import type { Row } from '../routing/routed-source.ts';
import type { TaskRun } from '../task-run.ts';

/** One page of the liquidity list as the real types allow it: every level may be null (DODOEX/widgets a56d6a1a, graphql.ts). */
type ListPage = {
  liquidity_list: { totalCount: number | null; currentPage: number | null; lqList: (Row | null)[] | null } | null;
};

/**
 * One liquidity-list snapshot of a chain, checked against `totalCount`. Every pool type the config lists is asked for
 * by name (`filterTypes`): the official client always sends them, and the service's default without the filter is not
 * published. Nulls, which the real types allow at every level: `liquidity_list: null` fails the pass with a message
 * (no snapshot is stored, the next run tries again); `lqList: null` is an empty page (and a `totalCount` above zero
 * then fails the count check, naming the null); `totalCount: null` pages until a short page, and the check is skipped.
 */
export async function pageList(run: TaskRun): Promise<void> {
  const items = new Map<string, Row>();
  let total: number | null = null;
  let nulls = 0;
  const nullPages: number[] = [];
  const chainId = run.task.chainId;
  const filterState = { address: '', viewOnlyOwn: false, filterTypes: run.deps.config.listPoolTypes };
  for (let page = 1; ; page++) {
    const where = {
      chainIds: [chainId],
      currentPage: page,
      pageSize: LIST_PAGE_SIZE,
      refreshNow: false,
      filterState,
      order: { orderBy: 'updatedAt', orderDirection: 'asc' },
    };
    const info = (await run.fetch<ListPage>(LIST_QUERY, { where })).liquidity_list;
    if (info === null || info === undefined) {
      const message = `the liquidity list answered liquidity_list: null for chain ${chainId} (page ${page}); no snapshot is stored this run, and the next run asks again`;
      throw new UpstreamError(message, { kind: 'garbage', retryable: true });
    }
    total = info.totalCount ?? null;
    if (info.lqList === null || info.lqList === undefined) nullPages.push(page);
    const list = info.lqList ?? [];
    for (const it of list) {
      if (it) items.set(it.id, it);
      else nulls++;
    }
    if (list.length < LIST_PAGE_SIZE || (total !== null && page * LIST_PAGE_SIZE >= total)) break;
  }
  if (total !== null && items.size !== total) {
    const why = nullPages.length
      ? `lqList was null on page ${nullPages.join(', ')}`
      : nulls
        ? `${nulls} of its items were null`
        : 'the list changed while paging';
    const message = `liquidity list of chain ${chainId} returned ${items.size} distinct pools but totalCount ${total} (${why})`;
    throw new UpstreamError(message, { kind: 'garbage', retryable: true });
  }
  run.takeRows([...items.values()]);
  const takenAt = new Date(run.block.timestamp * 1000).toISOString();
  await run.flush({ next: { block: run.block.number }, replace: { kind: 'snapshot' }, takenAt });
}
