/**
 * The liquidity-list dataset: every field of a list item, flattened into one row per pool and snapshot, and the
 * `FetchLiquidityList` query that selects them, both derived from one spec of the service's types.
 *
 * Source of the types: DODOEX/widgets a56d6a1a, `packages/dodoex-api/src/gql/graphql.ts` (`LiquidityLqList`,
 * `LiquidityPair`, `LiquidityToken`, `LiquidityLpToken`, `LiquidityApyData`, `LiquidityLp`, `LiquidityLpPriceRange`,
 * `LiquidityTick`). `LiquidityListInfo` is the page around the items (`currentPage`, `pageSize`, `totalCount`,
 * `chainIds`, `chains`, `user`): the pager reads it, it is not stored per pool.
 */
import type { Column, ColumnClass, StructType } from './column.ts';

/** One field of a list type: its class, and whether the type says it may be null. */
type Spec = readonly [field: string, cls: ColumnClass, nullable: boolean];

const TOKEN: readonly Spec[] = [
  ['id', 'text', false],
  ['symbol', 'text', false],
  ['name', 'text', false],
  ['decimals', 'bigint', false],
  ['usdPrice', 'decimal', false],
  ['logoImg', 'text', true],
  ['priceUpdateTimestamp', 'bigint', false],
  ['timestamp', 'bigint', false],
  ['totalSupply', 'raw', false],
  ['totalLiquidityOnDODO', 'decimal', false],
  ['tradeVolume', 'decimal', false],
  ['tradeVolumeBridge', 'decimal', false],
  ['untrackedVolume', 'decimal', false],
  ['volumeUSD', 'decimal', false],
  ['volumeUSDBridge', 'decimal', false],
  ['txCount', 'bigint', false],
  ['traderCount', 'bigint', false],
];

const LP_TOKEN: readonly Spec[] = [
  ['id', 'text', false],
  ['decimals', 'bigint', false],
  ['name', 'text', false],
  ['symbol', 'text', false],
  ['totalSupply', 'raw', false],
];

const APY: readonly Spec[] = [
  ['miningBaseApy', 'decimal', true],
  ['miningQuoteApy', 'decimal', true],
  ['transactionBaseApy', 'decimal', true],
  ['transactionQuoteApy', 'decimal', true],
  ['metromMiningApy', 'decimal', true],
];

/** `LiquidityPair`'s own scalars, in the order of the subgraph's `Pair` where it has them. */
const PAIR: readonly Spec[] = [
  ['id', 'text', false],
  ['chainId', 'int', false],
  ['chain', 'text', false],
  ['type', 'text', false],
  ['source', 'text', true],
  ['creator', 'text', false],
  ['owner', 'text', true],
  ['maintainer', 'text', false],
  ['mtFeeRateModel', 'text', false],
  ['baseSymbol', 'text', true],
  ['quoteSymbol', 'text', true],
  ['i', 'raw', true],
  ['k', 'raw', true],
  ['lpFeeRate', 'decimal', false],
  ['mtFeeRate', 'raw', false],
  ['baseReserve', 'decimal', false],
  ['quoteReserve', 'decimal', false],
  ['lastTradePrice', 'decimal', false],
  ['tvl', 'decimal', true],
  ['volume24H', 'decimal', true],
  ['untrackedBaseVolume', 'decimal', false],
  ['untrackedQuoteVolume', 'decimal', false],
  ['volumeBaseToken', 'decimal', false],
  ['volumeQuoteToken', 'decimal', false],
  ['volumeUSD', 'decimal', false],
  ['feeBase', 'decimal', false],
  ['feeQuote', 'decimal', false],
  ['feeUSD', 'decimal', false],
  ['mtFeeBase', 'decimal', false],
  ['mtFeeQuote', 'decimal', false],
  ['mtFeeUSD', 'decimal', false],
  ['txCount', 'bigint', false],
  ['traderCount', 'bigint', false],
  ['liquidityProviderCount', 'bigint', false],
  ['createdAtTimestamp', 'bigint', false],
  ['createdAtBlockNumber', 'bigint', false],
  ['isTradeAllowed', 'bool', false],
  ['isDepositBaseAllowed', 'bool', false],
  ['isDepositQuoteAllowed', 'bool', false],
  ['isMining', 'bool', true],
  ['miningAddress', 'list', true],
];

const TICK: StructType = {
  id: 'text',
  tickIdx: 'text',
  liquidityGross: 'text',
  liquidityNet: 'text',
  price0: 'text',
  price1: 'text',
};

/** `LiquidityLp`: a position of the asking `user` (never sent by the exporter, so null in practice; kept whole when present). */
const POSITION: StructType = {
  id: 'text',
  liquidityTokenBalance: 'text',
  liquidityTokenInMining: 'text',
  liquidityUSD: 'text',
  poolShare: 'text',
  baseTokenAmount: 'text',
  quoteTokenAmount: 'text',
  baseTokenAmountInMining: 'text',
  quoteTokenAmountInMining: 'text',
  baseTokenPrice: 'text',
  quoteTokenPrice: 'text',
  outOfRange: 'bool',
  tokenId: 'text',
  priceRange: {
    token0LowerPrice: 'text',
    token0UpperPrice: 'text',
    token1LowerPrice: 'text',
    token1UpperPrice: 'text',
  },
  tickLower: TICK,
  tickUpper: TICK,
};

/** snake_case, with the digit-letter names spelled as people read them (`volume24H` → `volume_24h`). */
function snakeName(name: string): string {
  if (name === 'volume24H') return 'volume_24h';
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/**
 * Column names keep the first list's (`type`, `base_reserve`, `base_token_symbol`, `base_lp_token_id`…); fields that
 * would clash get a prefix: the pair's `id` and `chainId` (`pair_id`, `pair_chain_id`) and `chain` (`chain_key`, since
 * `chain` is the lake's partition column).
 */
function pairColumn(field: string): string {
  if (field === 'id' || field === 'chainId') return `pair_${snakeName(field)}`;
  if (field === 'chain') return 'chain_key';
  return snakeName(field);
}

/**
 * Whether each object on the way to a field may be null: `pair` (nullable in the real types), its tokens (never null),
 * LP tokens (null for DPP pools) and `apy` (nullable).
 */
const PARENTS: Readonly<Record<string, boolean>> = {
  pair: true,
  baseToken: false,
  quoteToken: false,
  baseLpToken: true,
  quoteLpToken: true,
  apy: true,
};

/** A column at `path` of a list item, named `column`. */
const col = (
  path: string,
  column: string,
  kind: { cls: ColumnClass; nullable: boolean; struct?: StructType },
): Column => {
  const { cls, nullable, struct } = kind;
  const keys = path.split('.');
  const parents = keys.slice(0, -1).map((k) => PARENTS[k]!);
  return {
    field: keys.at(-1)!,
    column,
    cls,
    nullable,
    select: path,
    ...(parents.length ? { parents } : {}),
    ...(struct ? { struct } : {}),
  };
};

/** The columns of one liquidity-list snapshot row: every field of a list item, nested objects flattened. */
export const LIST_COLUMNS: readonly Column[] = [
  col('id', 'id', { cls: 'text', nullable: false }),
  col('isPrivatePool', 'is_private_pool', { cls: 'bool', nullable: true }),
  col('isMyLiquidity', 'is_my_liquidity', { cls: 'bool', nullable: true }),
  ...PAIR.map(([f, cls, n]) => col(`pair.${f}`, pairColumn(f), { cls, nullable: n })),
  ...(['base', 'quote'] as const).flatMap((side) => [
    ...TOKEN.map(([f, cls, n]) => col(`pair.${side}Token.${f}`, `${side}_token_${snakeName(f)}`, { cls, nullable: n })),
    ...LP_TOKEN.map(([f, cls, n]) =>
      col(`pair.${side}LpToken.${f}`, `${side}_lp_token_${snakeName(f)}`, { cls, nullable: n }),
    ),
  ]),
  ...APY.map(([f, cls, n]) => col(`pair.apy.${f}`, snakeName(f), { cls, nullable: n })),
  col('liquidityPositions', 'liquidity_positions', { cls: 'structs', nullable: true, struct: POSITION }),
];

type Tree = { [key: string]: Tree };

function selectionOf(tree: Tree): string {
  return Object.entries(tree)
    .map(([k, sub]) => (Object.keys(sub).length ? `${k} { ${selectionOf(sub)} }` : k))
    .join(' ');
}

function structTree(t: StructType): Tree {
  return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, typeof v === 'string' ? {} : structTree(v)]));
}

/** Items asked for per page of the list (the official client asks for 8 to 1000; 100 keeps a page small). */
export const LIST_PAGE_SIZE = 100;

/** The list query, selecting every stored field (and the page around them). */
export function listQuery(): string {
  const tree: Tree = {};
  for (const c of LIST_COLUMNS) {
    let node = tree;
    for (const key of c.select.split('.')) node = node[key] ??= {};
    if (c.struct) Object.assign(node, structTree(c.struct));
  }
  return `query FetchLiquidityList($where: Liquiditylist_filter) { liquidity_list(where: $where) { currentPage pageSize totalCount chainIds chains user lqList { ${selectionOf(tree)} } } }`;
}
