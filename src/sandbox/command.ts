/** `pool-export sandbox`: serves the local stand-in for the upstream service until stopped. */

import { readFileSync } from 'node:fs';
import type { CommandModule } from 'yargs';
import { layoutConflicts } from '../catalog/names.ts';
import { UsageError } from '../errors.ts';
import { parseSchemaModel, type SchemaModel, SchemaModelError } from '../schemas/entity-model.ts';
import { portHolder } from '../util/processes.ts';
import { parseFaults } from './faults.ts';
import { unservable } from './generic-data.ts';
import { PROFILES } from './naming.ts';
import { parsePrune } from './prune.ts';
import { SandboxService } from './sandbox-service.ts';
import { SandboxServer } from './server.ts';
import { KNOWN_CHAINS } from './timeline.ts';

/** The sandbox's default API key: 32 hex characters, so the gateway route accepts it too. */
export const DEFAULT_SANDBOX_KEY = '5a4db0c5e1f0d1e2a3b4c5d6e7f80912';

interface Args {
  port: number;
  host: string;
  'api-key': string;
  seed: number;
  scale: number;
  burst: number;
  'history-days': number;
  'pumped-prices': boolean;
  chains: string;
  'max-first': number;
  'max-skip': number;
  'latency-ms': number;
  'lag-blocks': number;
  'rate-limit': number;
  faults: string;
  'fault-seed': number;
  'block-time': number;
  prune: string;
  now?: string;
  profile: string;
  'gateway-profile': string;
  subgraph: string[];
}

/** Parses `--now`: an ISO time or Unix seconds; the wall clock when absent. */
export function parseNow(text: string | undefined): number {
  if (text === undefined || text === '') return Math.floor(Date.now() / 1000);
  if (/^\d+$/.test(text)) return Number(text);
  const ms = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(ms))
    throw new UsageError(`--now takes an ISO time such as 2026-01-01T00:00:00Z or Unix seconds, not "${text}"`);
  return Math.floor(ms / 1000);
}

/** A name a served subgraph may have: it becomes a path segment here and a schema name in an export. */
const SUBGRAPH_NAME = /^[a-z][a-z0-9_-]{0,62}$/;

/** Parses `--subgraph NAME=FILE` (repeatable): each name with the model of its schema file (and into `texts`, its text). */
export function parseSubgraphs(
  specs: readonly string[],
  texts: Map<string, string> = new Map(),
): Map<string, SchemaModel> {
  const out = new Map<string, SchemaModel>();
  for (const spec of specs) {
    const at = spec.indexOf('=');
    const name = at > 0 ? spec.slice(0, at) : '';
    const file = spec.slice(at + 1);
    if (at <= 0 || !file)
      throw new UsageError(`--subgraph takes NAME=FILE, such as uniswap-v2=schema.graphql, not "${spec}"`);
    if (!SUBGRAPH_NAME.test(name))
      throw new UsageError(
        `--subgraph name "${name}" must start with a lowercase letter and hold only a-z, 0-9, - and _ (at most 63)`,
      );
    if (out.has(name) || ['dodoex', 'token', 'mine', 'list'].includes(name))
      throw new UsageError(`--subgraph name "${name}" is taken (DODO's schemas, or given twice): choose another`);
    let sdl: string;
    try {
      sdl = readFileSync(file, 'utf8');
    } catch (e) {
      throw new UsageError(`--subgraph ${name}: cannot read the schema file ${file}: ${(e as Error).message}`);
    }
    let model: SchemaModel;
    try {
      model = parseSchemaModel(name, sdl);
    } catch (e) {
      if (e instanceof SchemaModelError) throw new UsageError(`--subgraph ${name} (${file}): ${e.message}`);
      throw e;
    }
    // What graph-node cannot deploy, the sandbox does not serve: it could not exist.
    const why = layoutConflicts(model)[0] ?? unservable(model);
    if (why) throw new UsageError(`--subgraph ${name} (${file}) cannot be served: ${why}`);
    out.set(name, model);
    texts.set(name, sdl);
  }
  return out;
}

function parseChains(text: string): number[] {
  return text.split(',').map((s) => {
    const id = Number(s.trim());
    if (!Number.isInteger(id) || id <= 0)
      throw new UsageError(`--chains takes chain ids such as 1,56,137; "${s}" is not one`);
    return id;
  });
}

/** The yargs module of the `sandbox` command. */
export const sandboxCommand: Pick<CommandModule<object, Args>, 'builder' | 'handler'> = {
  builder: (y) =>
    y
      .option('port', { type: 'number', default: 0, describe: 'TCP port; 0 picks a free one' })
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'address to listen on (loopback only)' })
      .option('api-key', {
        type: 'string',
        default: DEFAULT_SANDBOX_KEY,
        describe: 'the one accepted API key (32 hex characters for the gateway route)',
      })
      .option('seed', { type: 'number', default: 1, describe: 'seed of the generated data' })
      .option('scale', {
        type: 'number',
        default: 20_000,
        describe: 'swaps per chain in the generated history; other entities scale from it',
      })
      .option('burst', { type: 'number', default: 1100, describe: 'extra swaps packed into one block (one timestamp)' })
      .option('history-days', { type: 'number', default: 60, describe: 'days of history before the head' })
      .option('pumped-prices', {
        type: 'boolean',
        default: true,
        describe:
          'one untrusted token reports a USD price 1e24 times too high every third day, as a pool its owner controls can make the subgraph do (--no-pumped-prices: the sandbox of versions before it)',
      })
      .option('chains', {
        type: 'string',
        default: KNOWN_CHAINS.map((c) => c.chainId).join(','),
        describe: 'chain ids served by the list and the gateway (any id works on the subgraph route)',
      })
      .option('max-first', { type: 'number', default: 1000, describe: 'largest `first`' })
      .option('max-skip', { type: 'number', default: 5000, describe: 'largest `skip` (hosted indexers use 5000)' })
      .option('latency-ms', { type: 'number', default: 0, describe: 'delay added to every data request' })
      .option('lag-blocks', {
        type: 'number',
        default: 0,
        describe: "blocks the subgraphs' index stays behind the chain's head, as a lagging indexer's does",
      })
      .option('rate-limit', {
        type: 'number',
        default: 0,
        describe: 'requests per second before HTTP 429 with Retry-After; 0 is unlimited',
      })
      .option('faults', {
        type: 'string',
        default: '',
        describe:
          'fault rates, e.g. http500=0.05,timeout=0.02,truncate=0.01,reset=0.01,graphql=0.01,indexing=0.01,burst429=0.01',
      })
      .option('fault-seed', { type: 'number', default: 7, describe: 'seed of the fault draws' })
      .option('prune', {
        type: 'string',
        default: 'never',
        describe:
          "history the deployments keep, as a manifest's indexerHints.prune: never, auto (500 blocks) or a number of blocks; a query before the earliest block gets graph-node's error",
      })
      .option('block-time', {
        type: 'number',
        default: 0,
        describe: 'milliseconds per new block; 0 keeps the chain still until /_sandbox/advance',
      })
      .option('now', { type: 'string', describe: 'the time history ends at, ISO or Unix seconds (default: now)' })
      .option('profile', {
        choices: Object.keys(PROFILES),
        default: 'current',
        describe:
          "the self-hosted route's deployment: current (graph-node 0.35+ names, every entity), legacy (names from before 0.35), gateway (legacy names, without the three newer entities), ancient (legacy names, no _change_block filter)",
      })
      .option('gateway-profile', {
        choices: Object.keys(PROFILES),
        default: 'gateway',
        describe:
          "the indexing gateway's deployment (default: as the real gateway, legacy names and three entities fewer)",
      })
      .option('subgraph', {
        type: 'string',
        array: true,
        default: [] as string[],
        describe:
          'also serve a subgraph of any schema, NAME=FILE (repeatable): a generated world for that schema at <url>/subgraphs/name/NAME/<chain>',
      })
      .check((a) => {
        if (!['127.0.0.1', 'localhost', '::1'].includes(a.host))
          throw new UsageError(`--host must be a loopback address (127.0.0.1, ::1), not ${a.host}`);
        if (!Number.isInteger(a.scale) || a.scale < 10)
          throw new UsageError('--scale must be a whole number of at least 10');
        if (!a['api-key']) throw new UsageError('--api-key must not be empty');
        parseChains(a.chains);
        parseSubgraphs(a.subgraph);
        parseFaults(a.faults);
        parseNow(a.now);
        if (!Number.isInteger(a['lag-blocks']) || a['lag-blocks'] < 0)
          throw new UsageError(`--lag-blocks must be a whole number of blocks, 0 or more, not ${a['lag-blocks']}`);
        return true;
      }),
  handler: async (a) => {
    const world = {
      seed: a.seed,
      swaps: a.scale,
      burst: a.burst,
      historyDays: a['history-days'],
      pumpedPrices: a['pumped-prices'],
      now: parseNow(a.now),
      ...(a.prune === 'never' ? {} : { prune: parsePrune(a.prune) }),
    };
    const sdl = new Map<string, string>();
    const service = new SandboxService(
      world,
      parseChains(a.chains),
      { subgraph: a.profile, gateway: a['gateway-profile'] },
      parseSubgraphs(a.subgraph, sdl),
      sdl,
    );
    service.lag.blocks = a['lag-blocks'];
    const server = new SandboxServer(service, {
      apiKey: a['api-key'],
      maxFirst: a['max-first'],
      maxSkip: a['max-skip'],
      latencyMs: a['latency-ms'],
      rateLimit: a['rate-limit'],
      faults: parseFaults(a.faults),
      faultSeed: a['fault-seed'],
      blockTimeMs: a['block-time'],
    });
    let url: string;
    try {
      url = await server.listen(a.port, a.host);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
      const holder = portHolder(a.port);
      const who = holder
        ? `by pid ${holder.pid} (${holder.command}): stop it (kill ${holder.pid}), or`
        : 'by another process:';
      throw new Error(`port ${a.port} on ${a.host} is already in use ${who} pass another --port (0 picks a free one)`, {
        cause: e,
      });
    }
    process.stdout.write(`pool-export sandbox listening on ${url}\n`);
    for (const s of service.subgraphs())
      process.stdout.write(`  gateway subgraph ${s.chain} (${s.chainId}) ${s.schema}: ${s.subgraphId}\n`);
    // One line per served chain: `subgraph NAME: <url>`, a graph-node endpoint of that schema.
    for (const name of service.named.keys())
      for (const chainId of service.chainIds)
        process.stdout.write(`subgraph ${name}: ${url}${service.namedPath(name, chainId)}\n`);
    process.stdout.write(
      [
        'To export from it, in another shell:',
        `  export POOL_EXPORT_BASE_URL=${url} POOL_EXPORT_GATEWAY_URL=${url}`,
        `  export POOL_EXPORT_API_KEY=${a['api-key']} POOL_EXPORT_DATA_DIR=data/sandbox`,
        '  npx pool-export run --chains bsc     # then: npx pool-export status, npx pool-export schema check',
        '',
      ].join('\n'),
    );
    process.stdout.write(`ready ${url}\n`);
    const stop = async () => {
      await server.close();
      process.exit(0);
    };
    process.once('SIGINT', () => void stop());
    process.once('SIGTERM', () => void stop());
  },
};
