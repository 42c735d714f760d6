/**
 * The service's types of the list operation, as its generated client types declare them (DODOEX/widgets a56d6a1a,
 * `packages/dodoex-api/src/gql/graphql.ts`): names, nullability and argument types. A test compares them with a
 * checked-in transcription of those types.
 */
export const LIQUIDITY_LIST_SDL = `
scalar BigDecimal
scalar BigInt
scalar LiquidityBytes

input LiquidityFilterState {
  address: String
  filterAAddress: String
  filterASymbol: String
  filterBAddress: String
  filterBSymbol: String
  filterOutOwn: Boolean
  filterTypes: [String]
  hideSmallPrice: Boolean
  viewOnlyOwn: Boolean
}

input LiquidityOrder {
  orderBy: String
  orderDirection: String
}

input Liquiditylist_filter {
  chain: String
  chainIds: [Int]
  currentPage: Int
  filterState: LiquidityFilterState
  order: LiquidityOrder
  pageSize: Int
  refreshNow: Boolean
  user: String
}

type LiquidityListInfo {
  chainIds: [Int]
  chains: [String]
  currentPage: Int
  lqList: [LiquidityLqList]
  pageSize: Int
  totalCount: Int
  user: String
}

type LiquidityLqList {
  id: String
  isMyLiquidity: Boolean
  isPrivatePool: Boolean
  liquidityPositions: [LiquidityLp]
  pair: LiquidityPair
}

type LiquidityPair {
  apy: LiquidityApyData
  baseLpToken: LiquidityLpToken
  baseReserve: BigDecimal!
  baseSymbol: String
  baseToken: LiquidityToken!
  chain: String!
  chainId: Int!
  createdAtBlockNumber: BigInt!
  createdAtTimestamp: BigInt!
  creator: LiquidityBytes!
  feeBase: BigDecimal!
  feeQuote: BigDecimal!
  feeUSD: BigDecimal!
  i: BigInt
  id: ID!
  isDepositBaseAllowed: Boolean!
  isDepositQuoteAllowed: Boolean!
  isMining: Boolean
  isTradeAllowed: Boolean!
  k: BigInt
  lastTradePrice: BigDecimal!
  liquidityProviderCount: BigInt!
  lpFeeRate: BigDecimal!
  maintainer: LiquidityBytes!
  miningAddress: [String]
  mtFeeBase: BigDecimal!
  mtFeeQuote: BigDecimal!
  mtFeeRate: BigInt!
  mtFeeRateModel: LiquidityBytes!
  mtFeeUSD: BigDecimal!
  owner: LiquidityBytes
  quoteLpToken: LiquidityLpToken
  quoteReserve: BigDecimal!
  quoteSymbol: String
  quoteToken: LiquidityToken!
  source: String
  traderCount: BigInt!
  tvl: BigDecimal
  txCount: BigInt!
  type: String!
  untrackedBaseVolume: BigDecimal!
  untrackedQuoteVolume: BigDecimal!
  volume24H: BigDecimal
  volumeBaseToken: BigDecimal!
  volumeQuoteToken: BigDecimal!
  volumeUSD: BigDecimal!
}

type LiquidityToken {
  decimals: BigInt!
  id: ID!
  logoImg: String
  name: String!
  priceUpdateTimestamp: BigInt!
  symbol: String!
  timestamp: BigInt!
  totalLiquidityOnDODO: BigDecimal!
  totalSupply: BigInt!
  tradeVolume: BigDecimal!
  tradeVolumeBridge: BigDecimal!
  traderCount: BigInt!
  txCount: BigInt!
  untrackedVolume: BigDecimal!
  usdPrice: BigDecimal!
  volumeUSD: BigDecimal!
  volumeUSDBridge: BigDecimal!
}

type LiquidityLpToken {
  decimals: BigInt!
  id: ID!
  name: String!
  symbol: String!
  totalSupply: BigInt!
}

type LiquidityApyData {
  metromMiningApy: BigDecimal
  miningBaseApy: BigDecimal
  miningQuoteApy: BigDecimal
  transactionBaseApy: BigDecimal
  transactionQuoteApy: BigDecimal
}

type LiquidityLp {
  baseTokenAmount: String
  baseTokenAmountInMining: String
  baseTokenPrice: String
  id: String
  liquidityTokenBalance: String
  liquidityTokenInMining: String
  liquidityUSD: String
  outOfRange: Boolean
  poolShare: String
  priceRange: LiquidityLpPriceRange
  quoteTokenAmount: String
  quoteTokenAmountInMining: String
  quoteTokenPrice: String
  tickLower: LiquidityTick
  tickUpper: LiquidityTick
  tokenId: String
}

type LiquidityLpPriceRange {
  token0LowerPrice: String!
  token0UpperPrice: String!
  token1LowerPrice: String!
  token1UpperPrice: String!
}

type LiquidityTick {
  id: ID!
  liquidityGross: BigInt!
  liquidityNet: BigInt!
  price0: BigDecimal!
  price1: BigDecimal!
  tickIdx: BigInt!
}

type Query {
  liquidity_list(where: Liquiditylist_filter): LiquidityListInfo
}
`;
