/** The GraphQL client: graphql-request with a time-out per request, errors classified, the API key kept out of messages. */

import { ClientError, GraphQLClient } from 'graphql-request';
import type { Config } from '../config/config.ts';
import { BodyTooLargeError, UpstreamError } from '../errors.ts';
import { readText } from '../util/http-body.ts';
import { RateGovernor } from './rate-governor.ts';
import { graphqlError, htmlPage, httpError, redact } from './upstream-error.ts';

/** One upstream endpoint (a chain and schema, or the liquidity list). */
export interface Endpoint {
  /** Full URL, key included where the route needs it; never printed. */
  readonly url: string;
  /** A printable name: the URL without the key. */
  readonly label: string;
  /** Host used to share the per-endpoint concurrency limit. */
  readonly host: string;
  /**
   * What shares one request pace (rate governor): the host, or the host and a route's own key (a rate limit is the
   * key's), shown as `<host> (key <fingerprint>)`. The host when absent.
   */
  readonly pace?: string;
}

/** Settings of the client. */
export interface ClientOptions {
  /** Keys removed from every message (the main one and the routes' own). */
  readonly secrets: readonly string[];
  readonly userAgent: string;
  readonly timeoutMs: number;
  /** Bytes one answer may take (see `catalog/answer-budget.ts`); past it, reading stops and the answer is garbage. */
  readonly maxAnswerBytes: number;
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

/** Bytes of an error page read (the message quotes its first 200 characters). */
const ERROR_BODY_BYTES = 64 * 1024;

/** An answer whose body could not be read whole: over the budget, or not finished within the time-out. */
function bodyError(e: unknown, opts: ClientOptions): unknown {
  if (e instanceof BodyTooLargeError) {
    return new UpstreamError(`${e.message}, the budget for one answer (maxAnswerBytes; a page is far smaller)`, {
      kind: 'garbage',
      retryable: true,
    });
  }
  const err = e as Error;
  if (!opts.signal?.aborted && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
    return new UpstreamError(
      `the answer did not finish within ${opts.timeoutMs} ms (its headers came, its body did not)`,
      { kind: 'timeout', retryable: true },
    );
  }
  return e;
}

/** Sends single GraphQL requests; retrying is the caller's decision (see `retry.ts`). */
export class UpstreamClient {
  private readonly clients = new Map<string, GraphQLClient>();
  /** The request pace of each upstream host (or host and route key), found from its 429s. */
  readonly governors = new Map<string, RateGovernor>();

  constructor(readonly opts: ClientOptions) {}

  /** A client with the configuration's key, User-Agent, time-out and answer budget. */
  static forConfig(config: Config, extra: { timeoutMs?: number; signal?: AbortSignal } = {}): UpstreamClient {
    return new UpstreamClient({
      secrets: config.secrets,
      userAgent: `${config.userAgentPrefix}-${config.developerId}`,
      timeoutMs: extra.timeoutMs ?? config.timeoutMs,
      maxAnswerBytes: config.maxAnswerBytes,
      ...(extra.signal ? { signal: extra.signal } : {}),
    });
  }

  private governor(host: string): RateGovernor {
    let g = this.governors.get(host);
    if (!g) this.governors.set(host, (g = new RateGovernor()));
    return g;
  }

  private client(endpoint: Endpoint): GraphQLClient {
    let c = this.clients.get(endpoint.url);
    if (!c) {
      let bytes = 0;
      const governor = this.governor(endpoint.pace ?? endpoint.host);
      const timed: typeof fetch = async (input, init) => {
        await governor.acquire();
        const signals = [AbortSignal.timeout(this.opts.timeoutMs), ...(this.opts.signal ? [this.opts.signal] : [])];
        const res = await fetch(input, { ...init, signal: AbortSignal.any(signals) });
        if (res.status === 429) governor.onRateLimited();
        else governor.onAccepted();
        if (res.status !== 200)
          throw httpError(
            res.status,
            await readText(res, ERROR_BODY_BYTES, { truncate: true }).catch(() => ''),
            res.headers.get('retry-after'),
          );
        let text: string;
        try {
          text = await readText(res, this.opts.maxAnswerBytes);
        } catch (e) {
          throw bodyError(e, this.opts);
        }
        bytes = Buffer.byteLength(text);
        if (/^\s*</.test(text)) throw htmlPage(text);
        return new Response(text, { status: 200, headers: res.headers });
      };
      c = new GraphQLClient(endpoint.url, {
        fetch: timed,
        headers: { 'user-agent': this.opts.userAgent, 'content-type': 'application/json' },
      });
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
      // A JSON answer with neither `data` nor `errors` is not a GraphQL answer (a proxy's own JSON, say).
      if (r.data === undefined || r.data === null)
        throw new UpstreamError('the answer holds no `data` (nor `errors`): not a GraphQL answer', {
          kind: 'garbage',
          retryable: true,
        });
      return { data: r.data, bytes: (c as unknown as { lastBytes: number }).lastBytes };
    } catch (e) {
      throw this.classify(e, endpoint);
    }
  }

  private classify(e: unknown, endpoint: Endpoint): UpstreamError {
    const clean = (s: string) => redact(s, this.opts.secrets);
    if (e instanceof UpstreamError)
      return new UpstreamError(`${clean(e.message)} from ${endpoint.label}`, {
        kind: e.kind,
        retryable: e.retryable,
        ...e.extra,
      });
    if (e instanceof ClientError) {
      const errors = (e.response.errors ?? []).map((x) => clean(String(x.message)));
      if (errors.length) return graphqlError(errors, e.response.status);
      return new UpstreamError(
        `unexpected answer from ${endpoint.label}: ${clean(String(e.response.error ?? e.message)).slice(0, 300)}`,
        { kind: 'garbage', retryable: true },
      );
    }
    const err = e as Error & { cause?: { code?: string; message?: string } };
    if (this.opts.signal?.aborted)
      return new UpstreamError('stopped on request', { kind: 'stopped', retryable: false });
    if (err.name === 'TimeoutError' || err.name === 'AbortError')
      return new UpstreamError(`no answer within ${this.opts.timeoutMs} ms from ${endpoint.label}`, {
        kind: 'timeout',
        retryable: true,
      });
    if (err.name === 'TypeError' && /fetch failed|terminated/.test(err.message)) {
      const code = err.cause?.code ?? '';
      const detail = clean(err.cause?.message ?? code ?? err.message);
      // A name that does not resolve will not resolve on a retry; a refused connection might, after a restart.
      if (/bad port/.test(detail))
        return new UpstreamError(
          `the upstream address ${endpoint.host} uses a port that HTTP clients refuse (${detail}): use another port`,
          { kind: 'unreachable', retryable: false },
        );
      if (code === 'ENOTFOUND')
        return new UpstreamError(
          `the upstream host ${endpoint.host} could not be resolved (${detail}): check the address (POOL_EXPORT_BASE_URL, POOL_EXPORT_GATEWAY_URL) and the network`,
          { kind: 'unreachable', retryable: false },
        );
      if (UNREACHABLE.has(code))
        return new UpstreamError(
          `the upstream host ${endpoint.host} could not be reached (${detail}): check the address, the network and any proxy`,
          { kind: 'unreachable', retryable: true },
        );
      return new UpstreamError(`connection failed to ${endpoint.label}: ${detail}`, {
        kind: 'network',
        retryable: true,
      });
    }
    if (err instanceof SyntaxError || /JSON|Unexpected end/.test(err.message)) {
      return new UpstreamError(
        `answer from ${endpoint.label} is not valid JSON (${clean(err.message).slice(0, 200)})`,
        { kind: 'garbage', retryable: true },
      );
    }
    return new UpstreamError(`request to ${endpoint.label} failed: ${clean(err.message ?? String(e))}`, {
      kind: 'network',
      retryable: true,
      cause: undefined,
    });
  }
}
