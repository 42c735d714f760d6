/** The sandbox's HTTP server: the liquidity list, the self-hosted subgraph route, the gateway route, and a control API. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { canonicalSchema } from '../schemas/entity-model.ts';
import { bump, type ControlTarget, control, newStats, readBody, type Stats, send } from './control-api.ts';
import {
  type Deployment,
  type ExecOptions,
  type GraphQLRequest,
  type GraphQLResult,
  indexedHeader,
} from './deployment.ts';
import { type FaultKind, FaultPlan, type FaultRates, RateLimiter, SilentDrop } from './faults.ts';
import {
  type Garbage,
  garbledDeployment,
  garbleList,
  garbleMeta,
  HOSTILE_ERROR,
  HTML_PAGE,
  pageGarbler,
  rowGarbler,
} from './garbage.ts';
import { executeLiquidityList } from './liquidity-list.ts';
import type { SandboxService } from './sandbox-service.ts';
import { executeSubgraph } from './subgraph-executor.ts';

/** How long a `timeout` fault holds a request before dropping it. */
const TIMEOUT_HOLD_MS = 120_000;
/** The indexer address the gateway names in `bad indexers` errors. */
const INDEXER = `0x${'ab'.repeat(20)}`;

/** Server settings. */
export interface ServerOptions {
  readonly apiKey: string;
  readonly maxFirst: number;
  readonly maxSkip: number;
  readonly latencyMs: number;
  readonly rateLimit: number;
  readonly faults: FaultRates;
  readonly faultSeed: number;
  /** Milliseconds per new block on every chain; 0 keeps the head still. */
  readonly blockTimeMs: number;
}

/** A running sandbox server. */
export class SandboxServer implements ControlTarget {
  readonly stats: Stats = newStats();
  readonly faults: FaultPlan;
  readonly limiter: RateLimiter;
  latencyMs: number;
  /** Latency added per row asked (`first`), as a larger page takes an indexer longer: 0 unless set by the control API. */
  latencyPerRowMs = 0;
  private server: Server | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private readonly held = new Set<ServerResponse>();
  garbage: Garbage | undefined;
  /** Rows left out of answers silently (`silentDrop` of the control API), and the list of them. */
  readonly silentDrop: SilentDrop;

  constructor(
    readonly service: SandboxService,
    readonly opts: ServerOptions,
  ) {
    this.faults = new FaultPlan(opts.faults, opts.faultSeed);
    this.silentDrop = new SilentDrop(opts.faultSeed);
    this.limiter = new RateLimiter(opts.rateLimit);
    this.latencyMs = opts.latencyMs;
  }

  /** Starts listening; resolves with the base URL. */
  async listen(port: number, host: string): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, resolve);
    });
    if (this.opts.blockTimeMs > 0) {
      this.ticker = setInterval(() => {
        for (const w of this.service.worldsInUse()) w.tl.advance(1);
      }, this.opts.blockTimeMs);
      this.ticker.unref();
    }
    const addr = this.server.address() as AddressInfo;
    return `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`;
  }

  /** Stops the server and drops held requests. */
  async close(): Promise<void> {
    if (this.ticker) clearInterval(this.ticker);
    for (const r of this.held) r.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server?.closeAllConnections();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    try {
      if (url.pathname.startsWith('/_sandbox/')) return await control(this, url, req, res);
      this.stats.requests++;
      this.stats.inFlight++;
      this.stats.maxInFlight = Math.max(this.stats.maxInFlight, this.stats.inFlight);
      res.on('close', () => this.stats.inFlight--);
      res.on('finish', () => bump(this.stats.byStatus, String(res.statusCode)));
      await this.data(url, req, res);
    } catch (e) {
      if (!res.headersSent) send(res, 500, { error: (e as Error).message });
    }
  }

  /**
   * The IPFS node's `cat` (Kubo's RPC API, as graph-node calls it: POST, the hash in `arg`): a file's text, or Kubo's
   * error object with status 500 for a hash it does not hold.
   */
  private ipfsCat(url: URL, req: IncomingMessage, res: ServerResponse): void {
    bump(this.stats.byRoute, 'ipfs');
    if (req.method !== 'POST') {
      res.writeHead(405, { 'content-type': 'text/plain' }).end('405 - Method Not Allowed\n');
      return;
    }
    const arg = url.searchParams.get('arg') ?? '';
    const text = this.service.ipfs.cat(arg);
    if (text === undefined)
      return send(res, 500, {
        Message: `block was not found locally (offline): ipld: could not find ${arg}`,
        Code: 0,
        Type: 'error',
      });
    res.writeHead(200, { 'content-type': 'text/plain', 'x-stream-output': '1' }).end(text);
  }

  private async data(url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (url.pathname === '/ipfs/api/v0/cat') return this.ipfsCat(url, req, res);
    // A subgraph of any schema (`--subgraph NAME=FILE`) on one chain, at graph-node's own path, with no API key (a
    // graph-node of one's own has none); its answers follow the same rules, faults and limits as DODO's routes.
    const named = /^\/subgraphs\/name\/(.+)\/([^/]+)$/.exec(url.pathname);
    const namedChain = named ? this.service.chainOfSegment(named[2]!) : undefined;
    if (named && (!this.service.named.has(named[1]!) || namedChain === undefined))
      return send(res, 200, { errors: [{ message: `subgraph \`${named[1]}/${named[2]}\` not found` }] });
    const route = named
      ? 'named'
      : url.pathname === '/graphql'
        ? 'list'
        : url.pathname === '/subgraph/graphql'
          ? 'subgraph'
          : /^\/api\/[^/]*\/subgraphs\/id\/[^/]+$/.test(url.pathname)
            ? 'gateway'
            : undefined;
    // An unknown route is not found, as graph-node's and an IPFS node's servers answer one.
    if (!route) return send(res, 404, { message: 'Not found' });
    bump(this.stats.byRoute, named ? `subgraph:${named[1]}` : route);
    bump(this.stats.userAgents, req.headers['user-agent'] ?? '');
    if (req.method !== 'POST') return send(res, 405, { message: 'Method Not Allowed' });
    const body = await readBody(req);
    if (route === 'list' || route === 'subgraph') {
      const key = url.searchParams.get('apikey');
      if (!key) return send(res, 401, { message: 'Missing API key in request' });
      if (key !== this.opts.apiKey) return send(res, 401, { message: 'Invalid API key in request' });
    }
    const wait = this.limiter.take();
    if (wait > 0) {
      this.stats.rateLimited++;
      return send(
        res,
        429,
        { message: 'API rate limit exceeded' },
        { 'retry-after': String(Math.max(1, Math.ceil(wait))) },
      );
    }
    // The `first` variable as JSON text (the exporter's page queries take it as a variable); no parse for it.
    const first = /"first"\s*:\s*(\d+)/.exec(body)?.[1];
    if (first !== undefined) bump(this.stats.pageSizes, first);
    const latency = this.latencyMs + (first === undefined ? 0 : this.latencyPerRowMs * Number(first));
    if (latency > 0) await new Promise((r) => setTimeout(r, latency));
    const fault = this.faults.draw();
    if (fault) bump(this.stats.faults, fault);
    if (fault && this.transportFault(fault, res)) return;
    if (route !== 'list' && this.garbage?.mode === 'html')
      return send(res, 200, HTML_PAGE, { 'content-type': 'text/html' });
    if (this.garbage?.mode === 'hostile' && this.hostileAnswer(this.garbage, res)) return;
    if (route === 'gateway') return this.gateway(url, body, res, fault);
    if (!req.headers['content-type']?.includes('application/json'))
      return send(res, 400, { error: 'Content-Type header is required' });
    let parsed: GraphQLRequest;
    try {
      parsed = JSON.parse(body) as GraphQLRequest;
    } catch {
      return send(res, 400, {
        error: 'GraphQL server error (client error): The "query" field is missing in request data',
      });
    }
    if (route === 'list')
      return this.reply(
        res,
        performance.now(),
        garbleList(executeLiquidityList(parsed, this.service.listChains()), this.garbage),
        fault,
      );
    if (named)
      return this.subgraph(this.service.deployment(namedChain!, this.service.servedAs(named[1]!)), parsed, res, fault);
    const chainId = Number(url.searchParams.get('chainId'));
    const schema = canonicalSchema(url.searchParams.get('schemaName') ?? '');
    if (!Number.isInteger(chainId) || chainId <= 0 || !schema) {
      const name = `${url.searchParams.get('chainId')}/${url.searchParams.get('schemaName')}`;
      return send(res, 200, { errors: [{ message: `deployment \`${name}\` does not exist` }] });
    }
    this.subgraph(this.service.deployment(chainId, schema), parsed, res, fault);
  }

  /** The hostile cases that replace the whole answer; true when the response is taken care of. */
  private hostileAnswer(g: Garbage, res: ServerResponse): boolean {
    if (g.case === 'error-text') {
      send(res, 200, { errors: [{ message: HOSTILE_ERROR }] });
      return true;
    }
    if (g.case !== 'endless' && g.case !== 'trickle') return false;
    this.held.add(res);
    res.on('close', () => this.held.delete(res));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"data":{"swaps":[');
    if (g.case === 'trickle') {
      // One byte a second, for as long as the client listens.
      const timer = setInterval(() => res.write(' '), 1000);
      res.on('close', () => clearInterval(timer));
      return true;
    }
    // Rows as fast as the client reads them (writing again on 'drain'), for as long as it listens.
    const chunk = `${'{"id":"0x0000000000000000000000000000000000000000-0"},'.repeat(1200)}`;
    const pump = () => {
      while (!res.destroyed && res.write(chunk));
    };
    res.on('drain', pump);
    pump();
    return true;
  }

  /** Faults that break the transport; true when the response is taken care of. */
  private transportFault(fault: FaultKind, res: ServerResponse): boolean {
    if (fault === 'reset') {
      res.socket?.resetAndDestroy();
      return true;
    }
    if (fault === 'timeout') {
      this.held.add(res);
      setTimeout(() => {
        this.held.delete(res);
        res.destroy();
      }, TIMEOUT_HOLD_MS).unref();
      return true;
    }
    if (fault === 'http500') {
      send(res, 500, 'Internal Server Error', { 'content-type': 'text/html' });
      return true;
    }
    if (fault === 'burst429') {
      send(res, 429, { message: 'API rate limit exceeded' }, { 'retry-after': '1' });
      return true;
    }
    return false;
  }

  /**
   * Sends a GraphQL answer. `started` is when its execution began: the time to here goes to `stats.busyMs` and to a
   * `server-timing` header, so that a client can tell the sandbox's time from the transport's and its own.
   */
  private reply(
    res: ServerResponse,
    started: number,
    result: GraphQLResult,
    fault: FaultKind | undefined,
    headers: Record<string, string> = {},
  ): void {
    if (fault === 'graphql') result = { errors: [{ message: 'Store error: database unavailable' }] };
    if (result.errors?.some((e) => /only has data starting at block number/.test(e.message))) this.stats.pruned++;
    const text = JSON.stringify(result);
    const ms = performance.now() - started;
    this.stats.busyMs += ms;
    headers = { ...headers, 'server-timing': `app;dur=${ms.toFixed(2)}` };
    if (fault === 'truncate') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
      res.write(text.slice(0, Math.floor(text.length / 2)));
      res.socket?.destroy();
      return;
    }
    send(res, 200, text, headers);
  }

  private execOptions(fault: FaultKind | undefined, dep: Deployment): ExecOptions {
    const garble = rowGarbler(this.garbage);
    const garblePage = pageGarbler(this.garbage);
    const { omit, served } = this.silentDrop.forAnswer({ id: dep.id, chainId: dep.tl.spec.chainId });
    return {
      limits: { maxFirst: this.opts.maxFirst, maxSkip: this.opts.maxSkip },
      indexingError: fault === 'indexing',
      ...(garble ? { garble } : {}),
      ...(garblePage ? { garblePage } : {}),
      ...(omit ? { omit } : {}),
      ...(served ? { served } : {}),
    };
  }

  private subgraph(served: Deployment, req: GraphQLRequest, res: ServerResponse, fault: FaultKind | undefined): void {
    const started = performance.now();
    const dep = garbledDeployment(served, this.garbage);
    const result = garbleMeta(executeSubgraph(dep, req, this.execOptions(fault, dep)), this.garbage);
    this.reply(res, started, result, fault, {
      'graph-indexed': indexedHeader(dep),
      'graph-attestable': String(!result.errors),
    });
  }

  private gateway(url: URL, body: string, res: ServerResponse, fault: FaultKind | undefined): void {
    const [, , key = '', , , id = ''] = url.pathname.split('/');
    const err = (message: string) => send(res, 200, { errors: [{ message }] });
    if (!key) return err('auth error: missing API key');
    if (!/^[0-9a-f]{32}$/i.test(key)) return err('auth error: malformed API key');
    if (key !== this.opts.apiKey) return err('auth error: API key not found');
    const served = this.service.bySubgraphId(id);
    if (!served) return err(`subgraph not found: ${id}`);
    const dep = garbledDeployment(served, this.garbage);
    let parsed: GraphQLRequest;
    try {
      parsed = JSON.parse(body) as GraphQLRequest;
    } catch (e) {
      return err(`bad query: ${(e as Error).message}`);
    }
    const started = performance.now();
    const result = garbleMeta(executeSubgraph(dep, parsed, this.execOptions(fault, dep)), this.garbage);
    const first = result.errors?.[0]?.message ?? '';
    const block = /has only indexed up to block number (\d+) and data for block number (\d+)/.exec(first);
    if (block) return err(`bad indexers: {${INDEXER}: Unavailable(missing block: ${block[2]}, latest: ${block[1]})}`);
    if (/argument must be between 0 and|Query timed out|Store error:/.test(first))
      return err(`bad indexers: {${INDEXER}: BadResponse(unattestable response: ${first.slice(0, 256)})}`);
    this.reply(res, started, result, fault);
  }
}
