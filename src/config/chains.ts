/** Chain names and ids the exporter knows; any other id may be given as a number. */
import { UsageError } from '../errors.ts';

/** Known chains (SERVICE.md §2.4). */
export const CHAINS: Readonly<Record<string, number>> = {
  ethereum: 1,
  bsc: 56,
  polygon: 137,
  arbitrum: 42161,
  moonriver: 1285,
  aurora: 1313161554,
  avax: 43114,
  optimism: 10,
};

/** The name of a chain id (or the id as text). */
export function chainName(id: number): string {
  return Object.entries(CHAINS).find(([, v]) => v === id)?.[0] ?? String(id);
}

/** Parses a chain name or id; the error lists the known names. */
export function parseChain(text: string): number {
  const t = text.trim().toLowerCase();
  if (CHAINS[t] !== undefined) return CHAINS[t]!;
  if (/^\d+$/.test(t) && Number(t) > 0) return Number(t);
  throw new UsageError(`unknown chain "${text}"; use a chain id or one of: ${Object.keys(CHAINS).join(', ')}`);
}

/**
 * The network each known chain has in a subgraph's manifest (`dataSources[].network`): The Graph's networks registry
 * ids (`mainnet`, `matic`, `arbitrum-one`, …), with the other names the registry lists for the same chain. A
 * deployment added for a chain whose manifest names another network is refused.
 */
export const GRAPH_NETWORKS: Readonly<Record<number, readonly string[]>> = {
  1: ['mainnet', 'ethereum'],
  56: ['bsc'],
  137: ['matic', 'polygon'],
  42161: ['arbitrum-one', 'arbitrum'],
  1285: ['moonriver'],
  1313161554: ['aurora'],
  43114: ['avalanche', 'avax'],
  10: ['optimism'],
};

/** The chain a manifest's network names, when it is one of the known chains. */
export function chainOfNetwork(network: string): number | undefined {
  const n = network.trim().toLowerCase();
  const hit = Object.entries(GRAPH_NETWORKS).find(([, names]) => names.includes(n));
  return hit ? Number(hit[0]) : undefined;
}
