/** Configuration: defaults, then the config file, then environment variables; validated once and frozen. */

import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultAnswerBudget } from '../catalog/answer-budget.ts';
import { DATASETS } from '../catalog/catalog.ts';
import type { SubgraphSpec } from '../catalog/subgraphs.ts';
import { UsageError } from '../errors.ts';
import { canonicalSchema, SUBGRAPH_SCHEMAS } from '../schemas/entity-model.ts';
import { CHAINS, parseChain } from './chains.ts';
import { checkAmount, checkPoolTypes, checkSize, checkTrustedTokens, LIST_POOL_TYPES } from './config-values.ts';
import { checkLake, LAKE_URL_ENV, type LakeSettings } from './lake-url.ts';
import { autoMemoryLimit, hostReader } from './memory-limit.ts';
import { checkRoutes, checkUrl, ROUTE_CHOICES, type Route } from './route-config.ts';
import { registeredSubgraphs, urlSecrets } from './subgraph-config.ts';
import { MIN_TRACKED_LIQUIDITY_USD, type TrackedSettings, trustedTokens } from './tracked.ts';

export { LIST_POOL_TYPES } from './config-values.ts';
export type { LakeSettings } from './lake-url.ts';
export { ROUTE_CHOICES, type Route } from './route-config.ts';

/** The validated, frozen configuration. */
export interface Config {
  /** Folder of the warehouse, the Parquet lake and the lock. */
  readonly dataDir: string;
  /** Base URL of the service (`/graphql` and `/subgraph/graphql` below it). */
  readonly baseUrl: string;
  /** Base URL of the indexing gateway (`/api/<key>/subgraphs/id/<id>` below it). */
  readonly gatewayUrl: string;
  /** The API key; never logged or stored. */
  readonly apiKey: string;
  /** Developer id for the `User-Agent: <prefix>-<id>` header. */
  readonly developerId: string;
  readonly userAgentPrefix: string;
  /** Chains exported when a command names none. */
  readonly chains: readonly number[];
  /** Routes by `<chainId>/<schema>`, in order of preference; the self-hosted route otherwise. */
  readonly routes: Readonly<Record<string, readonly Route[]>>;
  /** How a task picks among its routes. */
  readonly routeChoice: (typeof ROUTE_CHOICES)[number];
  /** Blocks a route may be behind the freshest route of its chain and schema and still be chosen. */
  readonly maxLagBlocks: number;
  /** Every key the configuration holds (the main one and the routes' own): removed from every message and log line. */
  readonly secrets: readonly string[];
  /** Tasks fetched at once. */
  readonly concurrency: number;
  /** Requests in flight per endpoint host. */
  readonly perEndpointConcurrency: number;
  /** Rows per page (graph-node's maximum is 1000). */
  readonly pageSize: number;
  /** Per-request time-out. */
  readonly timeoutMs: number;
  /** Attempts per request before the task fails. */
  readonly maxAttempts: number;
  /** Bytes one upstream answer may take; a larger one is cut off and counts as garbage (see `catalog/answer-budget.ts`). */
  readonly maxAnswerBytes: number;
  /** Blocks to stay behind the head. */
  readonly confirmations: number;
  /** Seconds of history re-read by incremental runs, so that reorganized rows are corrected. */
  readonly reorgWindowSecs: number;
  /**
   * Blocks a run walks back from a route's head, one `_meta` request each, to find whether the block its last read
   * ended at is still on the chain; where it is, only what is new is read (`export/routing/reorg-check.ts`). 0: never.
   */
  readonly reorgCheckBlocks: number;
  /** Rows buffered before one transaction commits them with the checkpoint. */
  readonly batchRows: number;
  /** Datasets whose first page a run asks in one request per route (`export/first-pages.ts`); 0: each its own. */
  readonly batchDatasets: number;
  /** Runs the ledger keeps (`store/run-ledger.ts`: older ones go, but for the rows still read). */
  readonly keepRuns: number;
  /** Shards of a first backfill larger than a page: key ranges fetched at once, then merged; 1 turns sharding off. */
  readonly shards: number;
  /**
   * DuckDB's memory limit during a run (it spills to the data folder's disk beyond it); empty: DuckDB's default, 80% of
   * RAM; `auto` (the default): 40% of a control group's memory limit, or 25% of the machine's (`memory-limit.ts`).
   */
  readonly duckdbMemoryLimit: string;
  /** Where `duckdbMemoryLimit` came from, in words: `auto` and what it read, the config file, or DuckDB's default. */
  readonly duckdbMemoryLimitFrom: string;
  /** The `schemaName` the self-hosted route is asked with, per schema (the service names the mining schema `mine`). */
  readonly schemaNames: Readonly<Record<string, string>>;
  /** Pool types the liquidity list is asked for by name (`filterTypes`); the service's default without them is not published. */
  readonly listPoolTypes: readonly string[];
  /** Trusted tokens per chain id, replacing the shipped list of each chain named (`src/config/trusted-tokens.json`). */
  readonly trustedTokens: Readonly<Record<string, readonly string[]>>;
  /** USD a trusted side must hold in one pool for the pool to give the other token a derived price. */
  readonly minTrackedLiquidityUsd: number;
  /** Where the Parquet lake goes: `url` empty for the folder's `lake/`, or `s3://bucket/prefix` (`bucket/bucket.ts`). */
  readonly lake: LakeSettings;
  /** Subgraphs of any schema: the config file's `subgraphs`, then the data folder's (`subgraph-config.ts`). */
  readonly subgraphs: readonly SubgraphSpec[];
  /** The IPFS endpoint a subgraph's manifest and schema are read from (`upstream/deployment-source.ts`). */
  readonly ipfsUrl: string;
}

/** The default of `maxAnswerBytes`: the largest page the catalog can ask for, generously sized (48 MiB). */
export const DEFAULT_ANSWER_BUDGET = defaultAnswerBudget(DATASETS);
/** The smallest `maxAnswerBytes` accepted: below it, the probe's own answer would not fit. */
const MIN_ANSWER_BUDGET = 1024 ** 2;

/** The real service's published addresses; the sandbox or another deployment is set by env or file. */
export const DEFAULTS = {
  dataDir: './data',
  baseUrl: 'https://api.dodoex.io',
  gatewayUrl: 'https://gateway.thegraph.com',
  apiKey: '',
  developerId: '',
  userAgentPrefix: 'dodoex',
  chains: Object.values(CHAINS),
  routes: {},
  routeChoice: 'first-healthy',
  maxLagBlocks: 50,
  concurrency: 4,
  perEndpointConcurrency: 4,
  pageSize: 1000,
  timeoutMs: 30_000,
  maxAttempts: 8,
  maxAnswerBytes: DEFAULT_ANSWER_BUDGET,
  confirmations: 0,
  reorgWindowSecs: 3_600,
  reorgCheckBlocks: 32,
  batchDatasets: 32,
  keepRuns: 1_000,
  batchRows: 20_000,
  shards: 4,
  // Measured on a first backfill of 500,000 swaps (2 cores): 0.70 GB peak and 0.89 × the time, against 0.90 GB with
  // DuckDB's default (80% of RAM), which grows with the data. 128MB is too little for rows of 21 MB (hostile names).
  duckdbMemoryLimit: 'auto',
  // The service's own list of schema names is `dodoex, vdodo, mine, token, nft, eip721, eip1155` (DODOEX/widgets
  // a56d6a1a, graphql.ts, `Pair_filter.schemaName`); `mine-v3` appears only in retired hosted-service slugs.
  schemaNames: { dodoex: 'dodoex', token: 'token', mine: 'mine' },
  listPoolTypes: LIST_POOL_TYPES,
  trustedTokens: {},
  minTrackedLiquidityUsd: MIN_TRACKED_LIQUIDITY_USD,
  lake: { url: '' },
  subgraphs: {},
  // The Graph's IPFS endpoint, which holds every deployment published to its network.
  ipfsUrl: 'https://api.thegraph.com/ipfs/',
} satisfies Omit<
  Config,
  | 'chains'
  | 'routes'
  | 'routeChoice'
  | 'secrets'
  | 'schemaNames'
  | 'listPoolTypes'
  | 'trustedTokens'
  | 'lake'
  | 'duckdbMemoryLimitFrom'
  | 'subgraphs'
> & {
  lake: { url: string };
  chains: number[];
  routes: Record<string, Route[]>;
  routeChoice: string;
  schemaNames: Record<string, string>;
  listPoolTypes: readonly string[];
  trustedTokens: Record<string, string[]>;
  subgraphs: Record<string, unknown>;
};

/** Environment variables and the keys they set. */
const ENV: Readonly<Record<string, keyof Config>> = {
  POOL_EXPORT_API_KEY: 'apiKey',
  POOL_EXPORT_BASE_URL: 'baseUrl',
  POOL_EXPORT_DEVELOPER_ID: 'developerId',
  POOL_EXPORT_GATEWAY_URL: 'gatewayUrl',
  POOL_EXPORT_DATA_DIR: 'dataDir',
  POOL_EXPORT_IPFS_URL: 'ipfsUrl',
};

/** A file holding the API key (a mounted Kubernetes or Docker secret), instead of the key in the environment. */
const API_KEY_FILE_ENV = 'POOL_EXPORT_API_KEY_FILE';

/**
 * The key in `POOL_EXPORT_API_KEY_FILE`: the file's text without its final line break (how secrets are mounted). The
 * key is never quoted in a message, only the file's path.
 */
function readKeyFile(path: string, inEnv: string | undefined): string {
  if (inEnv)
    throw new UsageError(
      `both POOL_EXPORT_API_KEY and ${API_KEY_FILE_ENV} are set; set one (the file, for a mounted secret)`,
    );
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(
      `${API_KEY_FILE_ENV} names ${path}, which cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'}); point it at the file that holds the key`,
    );
  }
  const key = text.replace(/\r?\n$/, '');
  if (key === '') throw new UsageError(`${API_KEY_FILE_ENV} names ${path}, which is empty; write the key into it`);
  return key;
}

const INT_KEYS = [
  'concurrency',
  'perEndpointConcurrency',
  'pageSize',
  'timeoutMs',
  'maxAttempts',
  'confirmations',
  'reorgWindowSecs',
  'reorgCheckBlocks',
  'batchRows',
  'batchDatasets',
  'keepRuns',
  'shards',
  'maxLagBlocks',
] as const;
/** Whole-number keys that may be 0. */
const ZERO_OK = new Set<string>([
  'confirmations',
  'reorgWindowSecs',
  'reorgCheckBlocks',
  'maxLagBlocks',
  'batchDatasets',
]);
const STRING_KEYS = [
  'dataDir',
  'baseUrl',
  'gatewayUrl',
  'apiKey',
  'developerId',
  'userAgentPrefix',
  'duckdbMemoryLimit',
  'ipfsUrl',
] as const;

function checkSchemaNames(raw: unknown): Record<string, string> {
  const example = '{"mine": "mine-v3"}';
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new UsageError(`config "schemaNames" must be an object like ${example}`);
  const out: Record<string, string> = { ...DEFAULTS.schemaNames };
  for (const [k, v] of Object.entries(raw)) {
    const schema = canonicalSchema(k);
    if (!schema)
      throw new UsageError(`config schemaNames key "${k}" is not a schema; valid: ${SUBGRAPH_SCHEMAS.join(', ')}`);
    if (typeof v !== 'string' || !/^[A-Za-z0-9_-]+$/.test(v))
      throw new UsageError(`config schemaNames.${k} must be a schema name such as "mine", not ${JSON.stringify(v)}`);
    out[schema] = v;
  }
  return out;
}

/** The tracked-value settings of a configuration. */
export function trackedSettings(config: Pick<Config, 'trustedTokens' | 'minTrackedLiquidityUsd'>): TrackedSettings {
  return { tokens: trustedTokens(config.trustedTokens), minLiquidityUsd: config.minTrackedLiquidityUsd };
}

/** Reads the optional config file (JSON); unknown keys are errors that list the valid ones. */
function readFile(path: string | undefined): Record<string, unknown> {
  const file = path ?? (existsSync('pool-export.config.json') ? 'pool-export.config.json' : undefined);
  if (!file) return {};
  if (!existsSync(file))
    throw new UsageError(`config file ${file} does not exist; pass --config with a JSON file, or leave it out`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(
      `config file ${file} is not valid JSON (${(e as Error).message}); fix it or pass another --config`,
    );
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new UsageError(`config file ${file} must hold a JSON object`);
  const valid = Object.keys(DEFAULTS);
  for (const k of Object.keys(raw))
    if (!valid.includes(k))
      throw new UsageError(`config file ${file}: unknown key "${k}"; valid keys: ${valid.join(', ')}`);
  return raw as Record<string, unknown>;
}

/** Loads and validates the configuration. */
export function loadConfig(
  opts: { configFile?: string; env?: NodeJS.ProcessEnv; overrides?: Partial<Record<keyof Config, unknown>> } = {},
): Config {
  const env = opts.env ?? process.env;
  const merged: Record<string, unknown> = { ...DEFAULTS, ...readFile(opts.configFile) };
  for (const [name, key] of Object.entries(ENV))
    if (env[name] !== undefined && env[name] !== '') merged[key] = env[name];
  const keyFile = env[API_KEY_FILE_ENV];
  if (keyFile) merged.apiKey = readKeyFile(keyFile, env.POOL_EXPORT_API_KEY);
  for (const [k, v] of Object.entries(opts.overrides ?? {})) if (v !== undefined) merged[k] = v;
  for (const k of STRING_KEYS) if (typeof merged[k] !== 'string') throw new UsageError(`${k} must be a string`);
  for (const k of INT_KEYS) {
    const v = Number(merged[k]);
    const min = ZERO_OK.has(k) ? 0 : 1;
    if (!Number.isInteger(v) || v < min)
      throw new UsageError(
        `${k} must be a whole number${min ? ' of at least 1' : ''}, not ${JSON.stringify(merged[k])}`,
      );
    merged[k] = v;
  }
  merged.duckdbMemoryLimitFrom =
    merged.duckdbMemoryLimit === ''
      ? "none set: DuckDB's own default, 80% of the machine's memory"
      : 'the configuration';
  if (merged.duckdbMemoryLimit === 'auto') {
    const auto = autoMemoryLimit(hostReader(env));
    merged.duckdbMemoryLimit = auto.limit;
    merged.duckdbMemoryLimitFrom = auto.from;
  }
  if (
    merged.duckdbMemoryLimit !== '' &&
    !/^\d+(\.\d+)?\s*(KB|MB|GB|KiB|MiB|GiB)$/i.test(String(merged.duckdbMemoryLimit))
  )
    throw new UsageError(
      `duckdbMemoryLimit must be a size such as 256MB or 1GB, "auto" or "", not ${JSON.stringify(merged.duckdbMemoryLimit)}`,
    );
  if ((merged.shards as number) > 64) throw new UsageError(`shards must be at most 64, not ${merged.shards}`);
  if ((merged.pageSize as number) > 1000)
    throw new UsageError(`pageSize must be at most 1000 (graph-node's limit), not ${merged.pageSize}`);
  const chains = merged.chains;
  if (!Array.isArray(chains) || chains.length === 0)
    throw new UsageError('chains must be a non-empty list of chain names or ids');
  const apiKey = merged.apiKey as string;
  if (apiKey && !/^[\x21-\x7e]+$/.test(apiKey))
    throw new UsageError(
      `${keyFile ? `the key in ${keyFile} (${API_KEY_FILE_ENV})` : 'POOL_EXPORT_API_KEY'} holds spaces or control characters; copy the key again from the developer platform`,
    );
  if (!(ROUTE_CHOICES as readonly unknown[]).includes(merged.routeChoice))
    throw new UsageError(
      `routeChoice must be ${ROUTE_CHOICES.map((c) => `"${c}"`).join(' or ')}, not ${JSON.stringify(merged.routeChoice)}`,
    );
  const routes = checkRoutes(merged.routes);
  const lake = checkLake(merged.lake, env[LAKE_URL_ENV]);
  // A bucket lake's secrets from the environment are removed from messages too (the SDK's errors never hold them, but
  // a message that quotes an environment would).
  const aws = lake.bucket ? [env.AWS_SECRET_ACCESS_KEY ?? '', env.AWS_SESSION_TOKEN ?? ''] : [];
  const dataDir = resolve(merged.dataDir as string);
  const subgraphs = registeredSubgraphs(merged.subgraphs, dataDir);
  const routeKeys = Object.values(routes).flatMap((l) => l.map((r) => r.apiKey ?? ''));
  const secrets = [apiKey, ...routeKeys, ...urlSecrets(subgraphs), ...aws].filter(Boolean);
  return Object.freeze({
    ...(merged as unknown as Config),
    dataDir,
    baseUrl: checkUrl('baseUrl (POOL_EXPORT_BASE_URL)', merged.baseUrl as string),
    gatewayUrl: checkUrl('gatewayUrl (POOL_EXPORT_GATEWAY_URL)', merged.gatewayUrl as string),
    ipfsUrl: checkUrl('ipfsUrl (POOL_EXPORT_IPFS_URL)', merged.ipfsUrl as string),
    chains: Object.freeze(chains.map((c) => parseChain(String(c)))),
    routes: Object.freeze(routes),
    secrets: Object.freeze([...new Set(secrets)]),
    schemaNames: Object.freeze(checkSchemaNames(merged.schemaNames)),
    listPoolTypes: checkPoolTypes(merged.listPoolTypes),
    trustedTokens: Object.freeze(checkTrustedTokens(merged.trustedTokens)),
    minTrackedLiquidityUsd: checkAmount('minTrackedLiquidityUsd', merged.minTrackedLiquidityUsd),
    maxAnswerBytes: checkSize('maxAnswerBytes', merged.maxAnswerBytes, MIN_ANSWER_BUDGET),
    lake,
    subgraphs: Object.freeze(subgraphs),
  });
}
