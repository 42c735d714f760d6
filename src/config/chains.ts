/**
 * Chains by name and id. Chains are numbers (EVM chain ids) everywhere inside; people name them:
 *
 * - DODO's eight names (SERVICE.md §2.4: `ethereum`, `bsc`, `polygon`, …), which the config, DODO's routes and the
 *   lake's chain folders have always used;
 * - every EVM network of The Graph's networks registry, by its id (`mainnet`, `matic`, `base`, `arbitrum-one`) or one
 *   of its aliases (`eth`, `polygon`, `evm-8453`): the copy in `networks-registry.json` names its version and commit;
 * - any chain id as a number.
 *
 * A name is shown as DODO's for its chains and the registry's id for the others (`base`); the lake's chain folders
 * (`chain=<name>`) keep DODO's names and the id for any other chain (`chain=8453`), so that a registry that renames a
 * network never moves a file.
 */
import { UsageError } from '../errors.ts';
import { closest } from '../util/suggest.ts';
import REGISTRY from './networks-registry.json' with { type: 'json' };

/** DODO's chains (SERVICE.md §2.4): their names, the default chains, and the lake's folder names. */
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

/** The registry copy's version (`0.7.111`), said where a name is not found. */
export const REGISTRY_VERSION: string = REGISTRY.version;

interface Network {
  readonly id: string;
  /** The EVM chain id of `eip155:<id>`; undefined for the registry's other kinds (Solana, NEAR, Cosmos…). */
  readonly chainId: number | undefined;
  readonly names: readonly string[];
}

const NETWORKS: readonly Network[] = REGISTRY.networks.map((n) => {
  const evm = /^eip155:(\d+)$/.exec(n.caip2Id);
  return {
    id: n.id,
    chainId: evm ? Number(evm[1]) : undefined,
    names: [n.id, ...n.aliases].map((s) => s.toLowerCase()),
  };
});
const BY_NAME = new Map(NETWORKS.flatMap((n) => n.names.map((name) => [name, n] as const)));
const BY_CHAIN = new Map(NETWORKS.filter((n) => n.chainId !== undefined).map((n) => [n.chainId!, n]));
const DODO_NAME = new Map(Object.entries(CHAINS).map(([name, id]) => [id, name]));

/** The name of a chain id: DODO's, else the registry's network id, else the id as text. */
export function chainName(id: number): string {
  return DODO_NAME.get(id) ?? BY_CHAIN.get(id)?.id ?? String(id);
}

/** The folder of a chain in the lake (`chain=<this>`): DODO's name, else the id. Never changes with the registry. */
export function chainFolder(id: number): string {
  return DODO_NAME.get(id) ?? String(id);
}

/** Parses a chain name or id; the error suggests the nearest name and says what names are taken. */
export function parseChain(text: string): number {
  const t = text.trim().toLowerCase();
  if (CHAINS[t] !== undefined) return CHAINS[t]!;
  if (/^\d+$/.test(t) && Number(t) > 0 && Number.isSafeInteger(Number(t))) return Number(t);
  const network = BY_NAME.get(t);
  if (network?.chainId !== undefined) return network.chainId;
  if (network)
    throw new UsageError(
      `chain "${text}" is ${network.id}, which is not an EVM chain: pool-export reads chains by their EVM chain id`,
    );
  const near = closest(t, [
    ...Object.keys(CHAINS),
    ...NETWORKS.filter((n) => n.chainId !== undefined).map((n) => n.id),
  ]);
  throw new UsageError(
    `unknown chain "${text}"; use a chain id or one of: ${Object.keys(CHAINS).join(', ')}, or a network of The Graph's networks registry ${REGISTRY_VERSION} (mainnet, matic, base, arbitrum-one, …)${near ? `; did you mean ${near}?` : ''}`,
  );
}

/** The network a chain has in a subgraph's manifest (`dataSources[].network`): the registry's id, or undefined. */
export function networkOf(chainId: number): string | undefined {
  return BY_CHAIN.get(chainId)?.id;
}

/**
 * The chain a manifest's network names: a registry network's id or alias (`mainnet`, `matic`, `arbitrum-one`) that is
 * an EVM chain, or one of DODO's names; undefined for a network the registry does not know (a local graph-node may
 * name its networks as it likes) or that is not an EVM chain.
 */
export function chainOfNetwork(network: string): number | undefined {
  const n = network.trim().toLowerCase();
  return CHAINS[n] ?? BY_NAME.get(n)?.chainId;
}
