/**
 * What tracked value trusts: per chain, the tokens whose USD price counts by themselves, and how much liquidity against
 * one of them a pool must hold to give another token a derived price (sql/helpers/01-tracked.sql). Defaults from
 * `trusted-tokens.json` (its sources are named there).
 */
import TRUSTED from './trusted-tokens.json' with { type: 'json' };

/** One trusted token of a chain. */
export interface TrustedToken {
  readonly chainId: number;
  /** Lowercase address. */
  readonly token: string;
  readonly symbol: string | null;
}

/** The tracked-value settings a report needs. */
export interface TrackedSettings {
  readonly tokens: readonly TrustedToken[];
  /** USD a trusted side must hold in one pool for the pool to give the other side a derived price. */
  readonly minLiquidityUsd: number;
}

/** Backing a price needs, by default: less than this in one pool against a trusted token is easy to move. */
export const MIN_TRACKED_LIQUIDITY_USD = 50_000;

/** The shipped trusted tokens, by chain id. */
export const DEFAULT_TRUSTED: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  Object.entries((TRUSTED as { chains: Record<string, { address: string }[]> }).chains).map(([chain, list]) => [
    chain,
    list.map((t) => t.address),
  ]),
);

const SYMBOLS = new Map(
  Object.entries((TRUSTED as { chains: Record<string, { address: string; symbol: string }[]> }).chains).flatMap(
    ([chain, list]) => list.map((t) => [`${chain}/${t.address}`, t.symbol] as const),
  ),
);

/** The trusted set: the shipped one, with each chain the config names replaced by the config's list. */
export function trustedTokens(overrides: Readonly<Record<string, readonly string[]>>): TrustedToken[] {
  const byChain = { ...DEFAULT_TRUSTED, ...overrides };
  return Object.entries(byChain).flatMap(([chain, list]) =>
    list.map((address) => ({
      chainId: Number(chain),
      token: address.toLowerCase(),
      symbol: SYMBOLS.get(`${chain}/${address.toLowerCase()}`) ?? null,
    })),
  );
}

/** The settings of the shipped defaults. */
export const DEFAULT_TRACKED: TrackedSettings = {
  tokens: trustedTokens({}),
  minLiquidityUsd: MIN_TRACKED_LIQUIDITY_USD,
};
