/** The service document's own requests (SERVICE.md §4.1 and §4.3), with the real root names. */

/** The documented `FetchLiquidityList` request body, exactly as the documentation sends it. */
export const LIQUIDITY_LIST_BODY = {
  operationName: 'FetchLiquidityList',
  variables: {
    first: 1000,
    where: {
      refreshNow: true,
      filterState: { address: '', viewOnlyOwn: false, filterTypes: ['CLASSICAL', 'DVM', 'DSP'] },
      chainIds: [56],
      currentPage: 1,
      pageSize: 8,
    },
  },
  query: `query FetchLiquidityList($where: Liquiditylist_filter) {
  liquidity_list(where: $where) {
    currentPage pageSize totalCount
    lqList {
      id isPrivatePool isMyLiquidity
      pair {
        id chainId type baseReserve quoteReserve lastTradePrice lpFeeRate i creator
        baseLpToken { id decimals __typename }
        quoteLpToken { id decimals __typename }
        baseToken { id symbol name decimals usdPrice logoImg __typename }
        quoteToken { id symbol name decimals usdPrice logoImg __typename }
        tvl
        apy { miningBaseApy miningQuoteApy transactionBaseApy transactionQuoteApy __typename }
        miningAddress
        __typename
      }
      __typename
    }
    __typename
  }
}`,
} as const;

/** The eight query shapes of the main exchange schema (§4.3), keyed by purpose. */
export const SEED_QUERIES: Readonly<Record<string, string>> = {
  'overview counts': '{ dodoZoos(first: 1) { id pairCount tokenCount crowdpoolingCount } }',
  'latest trades including smart routing orders':
    '{ orderHistories(first: 5, orderBy: timestamp, orderDirection: desc) { id hash block from to fromToken { id symbol } toToken { id symbol } amountIn amountOut timestamp } }',
  'swaps of one pool': '{ swaps(where: { pair: "$PAIR" }, first: 5) { hash from to } }',
  'most recently updated pools':
    '{ pairs(first: 5, where: { type_not: "VIRTUAL" }, orderBy: updatedAt, orderDirection: desc) { id type baseToken { id } quoteToken { id } baseReserve quoteReserve updatedAt } }',
  'daily pool statistics':
    '{ pairDayDatas(first: 5, where: { date_gt: $SINCE }, orderBy: date, orderDirection: desc) { date volumeBase volumeQuote feeBase feeQuote baseToken { symbol } quoteToken { symbol } } }',
  'user liquidity provision':
    '{ liquidityPositions { id pair { id baseSymbol quoteSymbol } user { id } lpToken { id symbol } liquidityTokenBalance liquidityTokenInMining updatedAt } }',
  'user information': '{ user(id: "$USER") { id txCount tradingRewardRecieved } }',
  'crowdfunding pool daily statistics':
    '{ crowdPoolingDayDatas { date crowdPooling { id creator baseToken { symbol } quoteToken { symbol } } investedQuote investCount newcome poolQuote } }',
};
