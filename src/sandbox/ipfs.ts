/**
 * The sandbox's IPFS node, as graph-node and The Graph's IPFS endpoint serve a deployment's files: each subgraph of
 * any schema (`--subgraph NAME=FILE`) has, per chain, a manifest (`subgraph.yaml`, as `graph deploy` uploads it) whose
 * `schema.file` links the schema's text and whose data sources name the chain's network as The Graph's networks
 * registry spells it; the manifest's hash is the deployment id its `_meta { deployment }` answers. Both are read with
 * the Kubo RPC API's `POST /api/v0/cat?arg=HASH` (graph-node's `graph/src/ipfs/rpc_client.rs` at 90e949d calls it so,
 * with an empty body), here under `/ipfs/`, as The Graph serves it (`https://api.thegraph.com/ipfs/api/v0/cat`).
 */
import { networkOf } from '../config/chains.ts';
import type { SchemaModel } from '../schemas/entity-model.ts';
import { hashString, hexOf, mix } from './hash.ts';
import type { PruneHint } from './prune.ts';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** A CIDv0-shaped hash of a text (`Qm` and 44 base58 characters), the same for the same text. */
export function contentHash(text: string): string {
  const h = hashString(text);
  let s = 'Qm';
  for (let i = 0; i < 44; i++) s += BASE58[mix(h, text.length, i) % 58];
  return s;
}

/** The manifest of one deployment of a subgraph on one chain, linking its schema by hash. */
export function manifestText(args: {
  readonly name: string;
  readonly chainId: number;
  readonly model: SchemaModel;
  readonly schemaHash: string;
  /** `indexerHints: prune:` (graph-node's `IndexerHints`, a top-level key of the manifest); none when absent. */
  readonly prune?: PruneHint | undefined;
}): string {
  const network = networkOf(args.chainId) ?? `evm-${args.chainId}`;
  const entities = args.model.entities.map((e) => `        - ${e.name}`).join('\n');
  const hints = args.prune === undefined ? '' : `indexerHints:\n  prune: ${args.prune}\n`;
  return `specVersion: 1.2.0
description: ${args.name}, served by the pool-export sandbox
${hints}schema:
  file:
    /: /ipfs/${args.schemaHash}
dataSources:
  - kind: ethereum
    name: ${args.name}
    network: ${network}
    source:
      address: "${hexOf(5, hashString(args.name), args.chainId)}"
      abi: Factory
      startBlock: 1
    mapping:
      kind: ethereum/events
      apiVersion: 0.0.9
      language: wasm/assemblyscript
      entities:
${entities}
      file:
        /: /ipfs/${contentHash(`${args.name} mapping`)}
`;
}

/** Files by hash. */
export class SandboxIpfs {
  private readonly files = new Map<string, string>();

  /** Adds a file, returning its hash. */
  add(text: string): string {
    const hash = contentHash(text);
    this.files.set(hash, text);
    return hash;
  }

  /** The file of a hash or of an `/ipfs/HASH` path, or undefined. */
  cat(arg: string): string | undefined {
    return this.files.get(arg.replace(/^\/ipfs\//, ''));
  }
}
