/** The `FetchLiquidityList` operation: pools of several chains with TVL and APY, computed from the same rows as the subgraph. */
import { buildSchema, type DocumentNode, executeSync, type GraphQLError, parse, validate } from 'graphql';
import * as X from '../util/exact.ts';
import type { GraphQLRequest, GraphQLResult } from './deployment.ts';
import { LIQUIDITY_LIST_SDL } from './liquidity-list-sdl.ts';
import { allRows, type Row, type Table, type View } from './table.ts';
import type { World } from './world.ts';

/** Largest page the sandbox serves; the service documents no bound, so this guards the sandbox itself. */
export const MAX_PAGE_SIZE = 1000;
/** Pool types whose quote side earns separately (single-side LP), as the official client shows them. */
const SINGLE_SIDE = new Set(['CLASSICAL', 'DPP']);

/**
 * The pool types served when a request names none. The service's own default is not published; the sandbox answers
 * with the three types of the documented example call (CLASSICAL, DVM, DSP) and never "everything", so that an
 * exporter that relies on the default loses the DPP and GSP pools in tests, as it might against the real service.
 */
export const DEFAULT_FILTER_TYPES: readonly string[] = ['CLASSICAL', 'DVM', 'DSP'];

const schema = buildSchema(LIQUIDITY_LIST_SDL);

/** What the list needs of one chain. */
export interface ChainSource {
  readonly world: World;
  readonly tables: ReadonlyMap<string, Table>;
}

interface Filter {
  chainIds?: number[] | null;
  currentPage?: number | null;
  pageSize?: number | null;
  user?: string | null;
  filterState?: {
    address?: string | null;
    filterTypes?: (string | null)[] | null;
    viewOnlyOwn?: boolean | null;
    filterOutOwn?: boolean | null;
    filterASymbol?: string | null;
    filterBSymbol?: string | null;
    filterAAddress?: string | null;
    filterBAddress?: string | null;
  } | null;
  order?: { orderBy?: string | null; orderDirection?: string | null } | null;
}

function rowsOf(src: ChainSource, entity: string, view: View): Row[] {
  return allRows(src.tables.get(entity)!, view);
}

/** Fee and volume in USD of each pool over the 24 hours before the head, summed from its swaps. */
function last24h(src: ChainSource, view: View): Map<string, { vol: X.Dec; fee: X.Dec }> {
  const swaps = src.tables.get('Swap')!;
  const tokens = new Map(rowsOf(src, 'Token', view).map((t) => [t.id, t]));
  const pairs = new Map(rowsOf(src, 'Pair', view).map((p) => [p.id, p]));
  const since = src.world.tl.ts(view.at) - 86_400;
  const out = new Map<string, { vol: X.Dec; fee: X.Dec }>();
  for (const group of swaps.groups(view, 'desc')) {
    if (Number(group[0]!.timestamp) <= since) break;
    for (const s of group) {
      const p = pairs.get(s.pair as string)!;
      const price = (id: unknown) => X.parse(tokens.get(id as string)!.usdPrice as string);
      const fee = X.add(
        X.mul(X.parse(s.feeBase as string), price(p.baseToken)),
        X.mul(X.parse(s.feeQuote as string), price(p.quoteToken)),
      );
      const acc = out.get(p.id) ?? { vol: X.dec(0), fee: X.dec(0) };
      out.set(p.id, { vol: X.add(acc.vol, X.parse(s.volumeUSD as string)), fee: X.add(acc.fee, fee) });
    }
  }
  return out;
}

/** A PMM position as `LiquidityLp` shows it: balances; the AMM V3 fields (ticks, price range, token id) are null. */
function positionObj(pos: Row): Record<string, unknown> {
  return {
    id: pos.id,
    liquidityTokenBalance: pos.liquidityTokenBalance,
    liquidityTokenInMining: pos.liquidityTokenInMining,
    liquidityUSD: null,
    poolShare: null,
    baseTokenAmount: null,
    quoteTokenAmount: null,
    baseTokenAmountInMining: null,
    quoteTokenAmountInMining: null,
    baseTokenPrice: null,
    quoteTokenPrice: null,
    outOfRange: null,
    tokenId: null,
    priceRange: null,
    tickLower: null,
    tickUpper: null,
  };
}

function tokenObj(t: Row): Record<string, unknown> {
  return { ...t, logoImg: t.symbol === 'unknown' ? null : `/tokens/${t.id}.png` };
}

/** The list items of one chain, before filtering and paging. */
function chainItems(src: ChainSource, user: string | undefined): Record<string, unknown>[] {
  const tl = src.world.tl;
  const view = { at: tl.head, epoch: tl.epoch };
  const tokens = new Map(rowsOf(src, 'Token', view).map((t) => [t.id, t]));
  const lps = new Map(rowsOf(src, 'LpToken', view).map((t) => [t.id, t]));
  // The asking user's positions, by pool: `isMyLiquidity` and `liquidityPositions` (null when no user is given).
  const owned = new Map<string, Row[]>();
  for (const pos of user ? rowsOf(src, 'LiquidityPosition', view).filter((x) => x.user === user.toLowerCase()) : []) {
    owned.set(pos.pair as string, [...(owned.get(pos.pair as string) ?? []), pos]);
  }
  const stats = last24h(src, view);
  const items: Record<string, unknown>[] = [];
  for (const p of rowsOf(src, 'Pair', view)) {
    if (p.type === 'VIRTUAL') continue;
    const base = tokens.get(p.baseToken as string)!;
    const quote = tokens.get(p.quoteToken as string)!;
    const tvl = X.add(
      X.mul(X.parse(p.baseReserve as string), X.parse(base.usdPrice as string)),
      X.mul(X.parse(p.quoteReserve as string), X.parse(quote.usdPrice as string)),
    );
    const s = stats.get(p.id) ?? { vol: X.dec(0), fee: X.dec(0) };
    const txApy = tvl.m === 0n ? null : X.format(X.div(X.mul(s.fee, X.dec(365)), tvl, 18));
    // Pools with a mining contract: a fixed quarter of them, chosen by address.
    const k = Number.parseInt(p.id.slice(2, 10), 16);
    const mining = k % 4 === 0;
    const miningApy = mining ? X.format(X.dec(1 + (k % 5000), 4)) : null;
    const lp = (id: unknown) => (id ? (lps.get(id as string) ?? null) : null);
    items.push({
      id: p.id,
      isPrivatePool: p.type === 'DPP',
      isMyLiquidity: user ? owned.has(p.id) : null,
      liquidityPositions: user ? (owned.get(p.id) ?? []).map(positionObj) : null,
      pair: {
        ...p,
        chainId: src.world.chainId,
        chain: tl.spec.name,
        baseToken: tokenObj(base),
        quoteToken: tokenObj(quote),
        baseLpToken: lp(p.baseLpToken),
        quoteLpToken: lp(p.quoteLpToken),
        tvl: X.format(tvl),
        volume24H: X.format(s.vol),
        apy: {
          miningBaseApy: miningApy,
          miningQuoteApy: mining && SINGLE_SIDE.has(p.type as string) ? miningApy : null,
          transactionBaseApy: txApy,
          transactionQuoteApy: SINGLE_SIDE.has(p.type as string) ? txApy : null,
          metromMiningApy: null,
        },
        miningAddress: mining ? [`0x${'0'.repeat(8)}${p.id.slice(10)}`] : [],
        isMining: mining,
      },
      __tvl: tvl,
      __apy: txApy ? X.parse(txApy) : X.dec(0),
      __updated: Number(p.updatedAt),
    });
  }
  return items;
}

/** Answers one `liquidity_list` call over the given chains. */
export function liquidityList(
  where: Filter | null | undefined,
  chains: ReadonlyMap<number, ChainSource>,
): Record<string, unknown> {
  const w = where ?? {};
  const page = w.currentPage ?? 1;
  const size = w.pageSize ?? 10;
  if (!Number.isInteger(page) || page < 1) throw new Error(`currentPage must be a whole number from 1, but is ${page}`);
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE)
    throw new Error(`pageSize must be between 1 and ${MAX_PAGE_SIZE}, but is ${size}`);
  const ids = w.chainIds?.length ? w.chainIds : [...chains.keys()];
  const fs = w.filterState ?? {};
  const user = w.user?.toLowerCase() || undefined;
  const types = new Set(fs.filterTypes?.length ? fs.filterTypes : DEFAULT_FILTER_TYPES);
  const addr = fs.address?.toLowerCase() || undefined;
  let items = ids.flatMap((id) => (chains.has(id) ? chainItems(chains.get(id)!, user) : []));
  const pairOf = (it: Record<string, unknown>) =>
    it.pair as Record<string, unknown> & { baseToken: Row; quoteToken: Row };
  items = items.filter((it) => {
    const p = pairOf(it);
    if (!types.has(p.type as string)) return false;
    if (addr && it.id !== addr) return false;
    if (fs.viewOnlyOwn && it.isMyLiquidity !== true) return false;
    if (fs.filterOutOwn && it.isMyLiquidity === true) return false;
    if (fs.filterASymbol && p.baseToken.symbol !== fs.filterASymbol && p.quoteToken.symbol !== fs.filterASymbol)
      return false;
    if (fs.filterBSymbol && p.baseToken.symbol !== fs.filterBSymbol && p.quoteToken.symbol !== fs.filterBSymbol)
      return false;
    if (fs.filterAAddress && ![p.baseToken.id, p.quoteToken.id].includes(fs.filterAAddress.toLowerCase())) return false;
    if (fs.filterBAddress && ![p.baseToken.id, p.quoteToken.id].includes(fs.filterBAddress.toLowerCase())) return false;
    return true;
  });
  const by = w.order?.orderBy ?? 'tvl';
  const sign = (w.order?.orderDirection ?? 'desc') === 'asc' ? 1 : -1;
  const key = (it: Record<string, unknown>): X.Dec =>
    by === 'updatedAt' ? X.dec(it.__updated as number) : by === 'apy' ? (it.__apy as X.Dec) : (it.__tvl as X.Dec);
  items.sort((a, b) => sign * X.compare(key(a), key(b)) || ((a.id as string) < (b.id as string) ? -1 : 1));
  const lqList = items.slice((page - 1) * size, page * size).map(({ __tvl, __apy, __updated, ...rest }) => rest);
  return {
    currentPage: page,
    pageSize: size,
    totalCount: items.length,
    lqList,
    chainIds: ids,
    chains: ids.map((id) => chains.get(id)?.world.tl.spec.name ?? String(id)),
    user: user ?? null,
  };
}

/** Executes a liquidity-list request body. */
export function executeLiquidityList(req: GraphQLRequest, chains: ReadonlyMap<number, ChainSource>): GraphQLResult {
  if (typeof req.query !== 'string') return { errors: [{ message: 'The "query" field is missing in request data' }] };
  let doc: DocumentNode;
  try {
    doc = parse(req.query);
  } catch (e) {
    return { errors: [{ message: (e as GraphQLError).message }] };
  }
  const errs = validate(schema, doc);
  if (errs.length)
    return { errors: errs.map((e) => ({ message: e.message, ...(e.locations ? { locations: e.locations } : {}) })) };
  const rootValue = { liquidity_list: (args: { where?: Filter }) => liquidityList(args.where, chains) };
  const r = executeSync({
    schema,
    document: doc,
    rootValue,
    variableValues: req.variables as Record<string, unknown>,
    ...(typeof req.operationName === 'string' ? { operationName: req.operationName } : {}),
  });
  return {
    ...(r.data ? { data: r.data as Record<string, unknown> } : {}),
    ...(r.errors ? { errors: r.errors.map((e) => ({ message: e.message })) } : {}),
  };
}
