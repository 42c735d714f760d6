/** Composes the sandbox: a world per chain, one deployment per chain and schema, and the gateway's subgraph ids. */
import type { GraphQLSchema } from 'graphql';
import { loadSchemaModel, type SchemaModel, withoutEntities } from '../schemas/entity-model.ts';
import { buildApiSchema } from './api-schema.ts';
import type { Deployment } from './deployment.ts';
import { dodoexTables } from './dodoex-data.ts';
import { genericTables } from './generic-data.ts';
import { mix } from './hash.ts';
import { manifestText, SandboxIpfs } from './ipfs.ts';
import type { ChainSource } from './liquidity-list.ts';
import { type DeploymentProfile, PROFILES, rootFields } from './naming.ts';
import { PruneState } from './prune.ts';
import type { Table } from './table.ts';
import { mineTables, tokenTables } from './token-mine-data.ts';
import { type World, type WorldOptions, Worlds } from './world.ts';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function base58(parts: number[], length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += BASE58[mix(...parts, i) % 58];
  return s;
}

type Builder = (model: SchemaModel, w: World) => Map<string, Table>;
const BUILDERS: Readonly<Record<string, Builder>> = { dodoex: dodoexTables, token: tokenTables, mine: mineTables };

/** Which profile each route serves: the self-hosted subgraph route, and the indexing gateway (an older deployment). */
export interface RouteProfiles {
  readonly subgraph: string;
  readonly gateway: string;
}

/** The profiles served when none are named: graph-node's current naming, and the gateway as the real one is. */
export const DEFAULT_ROUTE_PROFILES: RouteProfiles = { subgraph: 'current', gateway: 'gateway' };

/** All deployments of the sandbox, created on first use. */
export class SandboxService {
  readonly worlds: Worlds;
  private readonly models = new Map<string, SchemaModel>();
  private readonly apis = new Map<string, GraphQLSchema>();
  private readonly tables = new Map<string, Map<string, Table>>();
  private readonly deployments = new Map<string, Deployment>();
  /** Blocks every deployment's index stays behind the chain's head (`--lag-blocks`; changed at run time by control). */
  readonly lag = { blocks: 0 };
  /** The history every deployment keeps (`--prune`): its manifest's hint, and each one's earliest block as it moves. */
  readonly prune: PruneState | undefined;

  /** Subgraphs of any schema served besides DODO's (`--subgraph NAME=FILE`), by name. */
  readonly named: ReadonlyMap<string, SchemaModel>;
  /** The IPFS files of the named subgraphs' deployments: a manifest per chain, and the schema it links. */
  readonly ipfs = new SandboxIpfs();
  /** The deployment id of each named subgraph on each chain (`<chainId>/<name>`): its manifest's hash. */
  private readonly manifests = new Map<string, string>();

  constructor(
    readonly opts: WorldOptions,
    readonly chainIds: readonly number[],
    readonly profiles: RouteProfiles = DEFAULT_ROUTE_PROFILES,
    named: ReadonlyMap<string, SchemaModel> = new Map(),
    /** The schema text of each named subgraph, as its file holds it (served on IPFS as it is). */
    sdl: ReadonlyMap<string, string> = new Map(),
  ) {
    this.worlds = new Worlds(opts);
    this.prune = opts.prune === undefined ? undefined : new PruneState(opts.prune);
    for (const schema of Object.keys(BUILDERS)) this.models.set(schema, loadSchemaModel(schema));
    for (const name of named.keys())
      if (BUILDERS[name]) throw new Error(`subgraph name ${name} is DODO's own schema: choose another name`);
    this.named = named;
    for (const [name, model] of named) this.models.set(name, model);
    for (const p of [profiles.subgraph, profiles.gateway])
      if (!PROFILES[p]) throw new Error(`unknown deployment profile ${p}`);
    for (const [name, model] of named) {
      const schemaHash = this.ipfs.add(sdl.get(name) ?? '');
      for (const chainId of chainIds)
        this.manifests.set(
          `${chainId}/${name}`,
          this.ipfs.add(manifestText({ name, chainId, model, schemaHash, prune: opts.prune })),
        );
    }
  }

  /** A named subgraph redeployed: its URL serves another named subgraph's schema, world and deployment (a new hash). */
  private readonly versions = new Map<string, string>();

  /**
   * Redeploys the named subgraph `name` as `to` (another `--subgraph`): its URL then answers with `to`'s schema and
   * rows, and `_meta.deployment` names `to`'s manifest, as graph-node does when a subgraph name moves to a new version.
   */
  redeploy(name: string, to: string): void {
    for (const n of [name, to]) if (!this.named.has(n)) throw new Error(`unknown subgraph ${n}`);
    if (name === to) this.versions.delete(name);
    else this.versions.set(name, to);
  }

  /** The named subgraph a name's URL serves now (itself, unless redeployed). */
  servedAs(name: string): string {
    return this.versions.get(name) ?? name;
  }

  /** The entity schemas served. */
  schemaModels(): SchemaModel[] {
    return [...this.models.values()];
  }

  /** The gateway's subgraph id for a chain and schema (44 base58 characters, like the network's). */
  subgraphId(chainId: number, schema: string): string {
    return base58([this.opts.seed, chainId, schema.length, schema.charCodeAt(0)], 44);
  }

  /** The IPFS-style deployment id (`Qm…`). */
  deploymentId(chainId: number, schema: string): string {
    const manifest = this.manifests.get(`${chainId}/${schema}`);
    if (manifest) return manifest;
    return `Qm${base58([this.opts.seed, chainId, schema.length, schema.charCodeAt(0), 7], 44)}`;
  }

  /** The generated tables of a chain and schema, shared by every profile that serves them. */
  private tablesOf(chainId: number, schema: string): Map<string, Table> {
    const key = `${chainId}/${schema}`;
    let t = this.tables.get(key);
    if (!t) {
      const model = this.models.get(schema)!;
      const world = this.worlds.get(chainId);
      t = BUILDERS[schema] ? BUILDERS[schema](model, world) : genericTables(model, world, schema);
      this.tables.set(key, t);
    }
    return t;
  }

  /** The API schema of a schema under a profile (built once). */
  private api(schema: string, profileName: string, model: SchemaModel, profile: DeploymentProfile): GraphQLSchema {
    const key = `${schema}/${profileName}`;
    let api = this.apis.get(key);
    if (!api) this.apis.set(key, (api = buildApiSchema(model, profile)));
    return api;
  }

  /** The deployment of a chain and canonical schema as one route serves it (`subgraph` by default). */
  deployment(chainId: number, schema: string, route: keyof RouteProfiles = 'subgraph'): Deployment {
    // A named subgraph is served with the self-hosted route's profile (`--profile`): its naming and `_change_block`;
    // the entities the profile omits are DODO's, so it keeps every one of its own.
    const profileName = this.named.has(schema) ? this.profiles.subgraph : this.profiles[route];
    const key = `${chainId}/${schema}/${profileName}`;
    let d = this.deployments.get(key);
    if (!d) {
      const profile = PROFILES[profileName]!;
      const omit = this.named.has(schema) ? [] : profile.omit;
      const model = withoutEntities(this.models.get(schema)!, new Set(omit));
      const world = this.worlds.get(chainId);
      d = {
        id: this.deploymentId(chainId, schema),
        model,
        api: this.api(schema, profileName, model, profile),
        apiOptions: profile,
        roots: rootFields(model, profile.naming),
        tables: this.tablesOf(chainId, schema),
        tl: world.tl,
        lag: this.lag,
        ...(this.prune ? { prune: this.prune } : {}),
      };
      this.deployments.set(key, d);
    }
    return d;
  }

  /** The deployment behind a gateway subgraph id, among the served chains. */
  bySubgraphId(id: string): Deployment | undefined {
    for (const chainId of this.chainIds) {
      for (const schema of Object.keys(BUILDERS))
        if (this.subgraphId(chainId, schema) === id) return this.deployment(chainId, schema, 'gateway');
    }
    return undefined;
  }

  /** The chain a named subgraph's URL names (`…/subgraphs/name/NAME/ethereum`, or its id), or undefined. */
  chainOfSegment(segment: string): number | undefined {
    for (const id of this.chainIds)
      if (segment === String(id) || segment === this.worlds.get(id).tl.spec.name) return id;
    return undefined;
  }

  /** The URL path of a named subgraph on one chain, as graph-node names a subgraph's route. */
  namedPath(name: string, chainId: number): string {
    return `/subgraphs/name/${name}/${this.worlds.get(chainId).tl.spec.name}`;
  }

  /** The chains the liquidity list serves, with their `dodoex` tables. */
  listChains(): Map<number, ChainSource> {
    return new Map(
      this.chainIds.map((id) => [id, { world: this.worlds.get(id), tables: this.tablesOf(id, 'dodoex') }]),
    );
  }

  /** Gateway ids of every served chain and schema, for printing at start. */
  subgraphs(): { chainId: number; chain: string; schema: string; subgraphId: string; deploymentId: string }[] {
    return this.chainIds.flatMap((chainId) =>
      Object.keys(BUILDERS).map((schema) => ({
        chainId,
        chain: this.worlds.get(chainId).tl.spec.name,
        schema,
        subgraphId: this.subgraphId(chainId, schema),
        deploymentId: this.deploymentId(chainId, schema),
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
