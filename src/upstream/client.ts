/** The GraphQL client: graphql-request with a time-out per request, errors classified, the API key kept out of messages. */
import { ClientError, GraphQLClient } from 'graphql-request';
import { RateGovernor } from './rate-governor.ts';
import { graphqlError, htmlPage, httpError, redact, UpstreamError } from './upstream-error.ts';

/** One upstream endpoint (a chain and schema, or the liquidity list). */
export interface Endpoint {
  /** Full URL, key included where the route needs it; never printed. */
  readonly url: string;
  /** A printable name: the URL without the key. */
  readonly label: string;
  /** Host used to share the per-endpoint concurrency limit. */
  readonly host: string;
}

/** Settings of the client. */
export interface ClientOptions {
  readonly apiKey: string;
  readonly userAgent: string;
  readonly timeoutMs: number;
  /** Aborts requests in flight when the run is asked to stop. */
  readonly signal?: AbortSignal;
}

/** One answer: the data and the wire size of the body. */
export interface Answer<T> {
  readonly data: T;
  readonly bytes: number;
}

/** Connection errors that mean the host is not there (DNS trouble, refused, no route), as opposed to a broken exchange. */
const UNREACHABLE = new Set(['EAI_AGAIN', 'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN']);

/** Sends single GraphQL requests; retrying is the caller's decision (see `retry.ts`). */
export class UpstreamClient {
  private readonly clients = new Map<string, GraphQLClient>();
  /** The request pace of each upstream host, found from its 429s. */
  readonly governors = new Map<string, RateGovernor>();

  constructor(readonly opts: ClientOptions) {}

  private governor(host: string): RateGovernor {
    let g = this.governors.get(host);
    if (!g) this.governors.set(host, (g = new RateGovernor()));
    return g;
  }

  private client(endpoint: Endpoint): GraphQLClient {
    let c = this.clients.get(endpoint.url);
    if (!c) {
      let bytes = 0;
      const governor = this.governor(endpoint.host);
      const timed: typeof fetch = async (input, init) => {
        await governor.acquire();
        const signals = [AbortSignal.timeout(this.opts.timeoutMs), ...(this.opts.signal ? [this.opts.signal] : [])];
        const res = await fetch(input, { ...init, signal: AbortSignal.any(signals) });
        if (res.status === 429) governor.onRateLimited();
        else governor.onAccepted();
        if (res.status !== 200) throw httpError(res.status, await res.text().catch(() => ''), res.headers.get('retry-after'));
        const text = await res.text();
        bytes = text.length;
        if (/^\s*</.test(text)) throw htmlPage(text);
        return new Response(text, { status: 200, headers: res.headers });
      };
      c = new GraphQLClient(endpoint.url, { fetch: timed, headers: { 'user-agent': this.opts.userAgent, 'content-type': 'application/json' } });
      Object.defineProperty(c, 'lastBytes', { get: () => bytes });
      this.clients.set(endpoint.url, c);
    }
    return c;
  }

  /** Sends one request; throws a classified UpstreamError with the key redacted. */
  async request<T>(endpoint: Endpoint, query: string, variables: Record<string, unknown>): Promise<Answer<T>> {
    const c = this.client(endpoint);
    try {
      const r = await c.rawRequest<T>(query, variables);
      return { data: r.data, bytes: (c as unknown as { lastBytes: number }).lastBytes };
    } catch (e) {
      throw this.classify(e, endpoint);
    }
  }

  private classify(e: unknown, endpoint: Endpoint): UpstreamError {
    const clean = (s: string) => redact(s, this.opts.apiKey);
    if (e instanceof UpstreamError) return new UpstreamError(`${clean(e.message)} from ${endpoint.label}`, e.kind, e.retryable, e.extra);
    if (e instanceof ClientError) {
      const errors = (e.response.errors ?? []).map((x) => clean(String(x.message)));
      if (errors.length) return graphqlError(errors, e.response.status);
      return new UpstreamError(`unexpected answer from ${endpoint.label}: ${clean(String(e.response.error ?? e.message)).slice(0, 300)}`, 'garbage', true);
    }
    const err = e as Error & { cause?: { code?: string; message?: string } };
    if (this.opts.signal?.aborted) return new UpstreamError('stopped on request', 'stopped', false);
    if (err.name === 'TimeoutError' || err.name === 'AbortError') return new UpstreamError(`no answer within ${this.opts.timeoutMs} ms from ${endpoint.label}`, 'timeout', true);
    if (err.name === 'TypeError' && /fetch failed|terminated/.test(err.message)) {
      const code = err.cause?.code ?? '';
      const detail = clean(err.cause?.message ?? code ?? err.message);
      // A name that does not resolve will not resolve on a retry; a refused connection might, after a restart.
      if (/bad port/.test(detail)) return new UpstreamError(`the upstream address ${endpoint.host} uses a port that HTTP clients refuse (${detail}): use another port`, 'unreachable', false);
      if (code === 'ENOTFOUND') return new UpstreamError(`the upstream host ${endpoint.host} could not be resolved (${detail}): check the address (POOL_EXPORT_BASE_URL, POOL_EXPORT_GATEWAY_URL) and the network`, 'unreachable', false);
      if (UNREACHABLE.has(code)) return new UpstreamError(`the upstream host ${endpoint.host} could not be reached (${detail}): check the address, the network and any proxy`, 'unreachable', true);
      return new UpstreamError(`connection failed to ${endpoint.label}: ${detail}`, 'network', true);
    }
    if (err instanceof SyntaxError || /JSON|Unexpected end/.test(err.message)) {
      return new UpstreamError(`answer from ${endpoint.label} is not valid JSON (${clean(err.message).slice(0, 200)})`, 'garbage', true);
    }
    return new UpstreamError(`request to ${endpoint.label} failed: ${clean(err.message ?? String(e))}`, 'network', true, { cause: undefined });
  }
}
