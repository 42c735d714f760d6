/** GraphQL documents derived from the catalog: one per dataset and cursor shape, with every value passed as a variable. */
import type { Dataset } from '../catalog/catalog.ts';

/** The page shapes a paginator sends. */
export type PageShape = 'seq-first' | 'seq-next' | 'range-first' | 'range-next' | 'id';

/** The selection set of a dataset. */
export function selection(ds: Dataset): string {
  return ds.columns.map((c) => c.select).join(' ');
}

/** A page query pinned to `$block`. `seq-first` starts at `$from` inclusive; `seq-next` continues after `($seq, $id)`. */
export function pageQuery(ds: Dataset, shape: PageShape): string {
  const sel = selection(ds);
  const head = `query Page($first: Int!, $block: Int!`;
  const rows = (args: string, vars: string) => `${head}${vars}) { rows: ${ds.root}(first: $first, block: { number: $block }, ${args}) { ${sel} } }`;
  if (shape === 'id') return rows('orderBy: id, orderDirection: asc, where: { id_gt: $id }', ', $id: ID!');
  const seq = ds.seq!;
  const t = ds.seqType!;
  // A shard of the key range: the same keyset, bounded above by `$to` (exclusive).
  if (shape === 'range-first') return rows(`orderBy: ${seq}, orderDirection: asc, where: { ${seq}_gte: $from, ${seq}_lt: $to }`, `, $from: ${t}!, $to: ${t}!`);
  if (shape === 'range-next') return rows(`orderBy: ${seq}, orderDirection: asc, where: { or: [{ ${seq}_gt: $seq, ${seq}_lt: $to }, { ${seq}: $seq, id_gt: $id }] }`, `, $seq: ${t}!, $id: ID!, $to: ${t}!`);
  if (shape === 'seq-first') return rows(`orderBy: ${seq}, orderDirection: asc, where: { ${seq}_gte: $from }`, `, $from: ${t}!`);
  // Keyset on (seq, id): a strict `seq_gt` alone would lose rows that share the boundary value.
  return rows(`orderBy: ${seq}, orderDirection: asc, where: { or: [{ ${seq}_gt: $seq }, { ${seq}: $seq, id_gt: $id }] }`, `, $seq: ${t}!, $id: ID!`);
}

/** The block lookup sent once per endpoint and run. */
export const META_QUERY = '{ _meta { block { number hash timestamp } deployment hasIndexingErrors } }';

/** The liquidity-list operation, selecting every field the catalog stores. */
export const LIST_QUERY = `query FetchLiquidityList($where: Liquiditylist_filter) {
  liquidity_list(where: $where) {
    currentPage pageSize totalCount
    lqList {
      id isPrivatePool isMyLiquidity
      pair {
        id chainId type baseReserve quoteReserve lastTradePrice lpFeeRate i creator
        baseLpToken { id decimals } quoteLpToken { id decimals }
        baseToken { id symbol name decimals usdPrice } quoteToken { id symbol name decimals usdPrice }
        tvl apy { miningBaseApy miningQuoteApy transactionBaseApy transactionQuoteApy } miningAddress
      }
    }
  }
}`;
