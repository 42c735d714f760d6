/**
 * Chains by name and id: DODO's eight names, every EVM network of The Graph's networks registry by id or alias, any id.
 * The oracle is the registry copy read here as plain JSON (`caip2Id` `eip155:<id>`), not the module's maps.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CHAINS,
  chainFolder,
  chainName,
  chainOfNetwork,
  networkOf,
  parseChain,
  REGISTRY_VERSION,
} from '../../src/config/chains.ts';

interface Entry {
  id: string;
  caip2Id: string;
  aliases: string[];
}
const registry = JSON.parse(
  readFileSync(new URL('../../src/config/networks-registry.json', import.meta.url), 'utf8'),
) as {
  version: string;
  source: string;
  networks: Entry[];
};
const evmId = (e: Entry) => (e.caip2Id.startsWith('eip155:') ? Number(e.caip2Id.slice(7)) : undefined);

describe('chains by name', () => {
  it('keeps the copy of the registry with its version and source', () => {
    expect(REGISTRY_VERSION).toBe(registry.version);
    expect(registry.source).toMatch(/graphprotocol\/networks-registry .* at commit [0-9a-f]{40} \(MIT License/);
    expect(registry.networks.length).toBeGreaterThan(100);
  });

  it("takes every EVM network's id and aliases, in any case, as its chain id", () => {
    let n = 0;
    for (const e of registry.networks) {
      const id = evmId(e);
      if (id === undefined) continue;
      for (const name of [e.id, ...e.aliases]) {
        // DODO's names come first: none of them names another chain in the registry (checked below).
        expect(parseChain(name.toUpperCase()), name).toBe(id);
        expect(chainOfNetwork(name), name).toBe(id);
        n++;
      }
    }
    expect(n).toBeGreaterThan(300);
  });

  it("agrees with the registry on DODO's eight chains, and names them as DODO does", () => {
    for (const [name, id] of Object.entries(CHAINS)) {
      const e = registry.networks.find((x) => evmId(x) === id);
      expect(e, name).toBeDefined();
      const other = registry.networks.find((x) => [x.id, ...x.aliases].includes(name));
      if (other) expect(evmId(other), name).toBe(id);
      expect(chainName(id)).toBe(name);
      expect(chainFolder(id)).toBe(name);
      expect(networkOf(id)).toBe(e!.id);
    }
    expect(parseChain('mainnet')).toBe(1);
    expect(parseChain('matic')).toBe(137);
    expect(networkOf(1)).toBe('mainnet');
    expect(networkOf(137)).toBe('matic');
  });

  it("names another chain by the registry's id, and keeps its id as its lake folder", () => {
    expect(chainName(8453)).toBe('base');
    expect(chainFolder(8453)).toBe('8453');
    expect(parseChain('base')).toBe(8453);
    expect(chainName(999_999_999)).toBe('999999999');
    expect(chainFolder(999_999_999)).toBe('999999999');
    expect(networkOf(999_999_999)).toBeUndefined();
  });

  it('takes any positive id, and refuses what is not a chain, naming the nearest name', () => {
    expect(parseChain(' 8453 ')).toBe(8453);
    for (const bad of ['0', '-1', '1.5', '99999999999999999999'])
      expect(() => parseChain(bad), bad).toThrow(/unknown chain/);
    expect(() => parseChain('etherum')).toThrow(/did you mean ethereum\?$/);
    expect(() => parseChain('arbitrum-on')).toThrow(/did you mean arbitrum-one\?$/);
    expect(() => parseChain('solana')).toThrow(/is not an EVM chain/);
    expect(chainOfNetwork('solana')).toBeUndefined();
    // A local graph-node may name its network as it likes.
    expect(chainOfNetwork('hardhat')).toBeUndefined();
  });
});
