/** Composes the sandbox: a world per chain, one deployment per chain and schema, and the gateway's subgraph ids. */
import type { GraphQLSchema } from 'graphql';
import { mix } from '../util/hash.ts';
import { buildApiSchema } from './api-schema.ts';
import { dodoexTables } from './dodoex-data.ts';
import { loadSchemaModel, type SchemaModel } from '../schemas/entity-model.ts';
import type { ChainSource } from './liquidity-list.ts';
import type { Deployment } from './subgraph-executor.ts';
import type { Table } from './table.ts';
import { mineTables, tokenTables } from './token-mine-data.ts';
import { Worlds, type World, type WorldOptions } from './world.ts';

/** Canonical schema names, and the other spellings users and the upstream use. */
export const SCHEMA_ALIASES: Readonly<Record<string, string>> = { dodoex: 'dodoex', exchange: 'dodoex', token: 'token', 'mine-v3': 'mine-v3', mine: 'mine-v3' };

/** The canonical schema name for a user-typed one, or undefined. */
export function canonicalSchema(name: string): string | undefined {
  return SCHEMA_ALIASES[name];
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function base58(parts: number[], length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += BASE58[mix(...parts, i) % 58];
  return s;
}

type Builder = (model: SchemaModel, w: World) => Map<string, Table>;
const BUILDERS: Readonly<Record<string, Builder>> = { dodoex: dodoexTables, token: tokenTables, 'mine-v3': mineTables };

/** All deployments of the sandbox, created on first use. */
export class SandboxService {
  readonly worlds: Worlds;
  private readonly models = new Map<string, { model: SchemaModel; api: GraphQLSchema }>();
  private readonly deployments = new Map<string, Deployment>();

  constructor(readonly opts: WorldOptions, readonly chainIds: readonly number[]) {
    this.worlds = new Worlds(opts);
    for (const schema of Object.keys(BUILDERS)) {
      const model = loadSchemaModel(schema);
      this.models.set(schema, { model, api: buildApiSchema(model) });
    }
  }

  /** The entity schemas served. */
  schemaModels(): SchemaModel[] {
    return [...this.models.values()].map((m) => m.model);
  }

  /** The gateway's subgraph id for a chain and schema (44 base58 characters, like the network's). */
  subgraphId(chainId: number, schema: string): string {
    return base58([this.opts.seed, chainId, schema.length, schema.charCodeAt(0)], 44);
  }

  /** The IPFS-style deployment id (`Qm…`). */
  deploymentId(chainId: number, schema: string): string {
    return `Qm${base58([this.opts.seed, chainId, schema.length, schema.charCodeAt(0), 7], 44)}`;
  }

  /** The deployment of a chain and canonical schema. */
  deployment(chainId: number, schema: string): Deployment {
    const key = `${chainId}/${schema}`;
    let d = this.deployments.get(key);
    if (!d) {
      const { model, api } = this.models.get(schema)!;
      const world = this.worlds.get(chainId);
      d = { id: this.deploymentId(chainId, schema), model, api, tables: BUILDERS[schema]!(model, world), tl: world.tl };
      this.deployments.set(key, d);
    }
    return d;
  }

  /** The deployment behind a gateway subgraph id, among the served chains. */
  bySubgraphId(id: string): Deployment | undefined {
    for (const chainId of this.chainIds) {
      for (const schema of Object.keys(BUILDERS)) if (this.subgraphId(chainId, schema) === id) return this.deployment(chainId, schema);
    }
    return undefined;
  }

  /** The chains the liquidity list serves, with their `dodoex` tables. */
  listChains(): Map<number, ChainSource> {
    return new Map(this.chainIds.map((id) => [id, { world: this.worlds.get(id), tables: this.deployment(id, 'dodoex').tables }]));
  }

  /** Gateway ids of every served chain and schema, for printing at start. */
  subgraphs(): { chainId: number; chain: string; schema: string; subgraphId: string; deploymentId: string }[] {
    return this.chainIds.flatMap((chainId) =>
      Object.keys(BUILDERS).map((schema) => ({
        chainId, chain: this.worlds.get(chainId).tl.spec.name, schema, subgraphId: this.subgraphId(chainId, schema), deploymentId: this.deploymentId(chainId, schema),
      })),
    );
  }

  /** Chains touched so far (served ones first). */
  worldsInUse(chainId?: number): World[] {
    if (chainId !== undefined) return [this.worlds.get(chainId)];
    for (const id of this.chainIds) this.worlds.get(id);
    return this.worlds.all();
  }
}
