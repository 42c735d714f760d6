/** The GraphQL client: graphql-request with a time-out per request, errors classified, the API key kept out of messages. */

import { ClientError, GraphQLClient } from 'graphql-request';
import type { Config } from '../config/config.ts';
import { BodyTooLargeError, UpstreamError } from '../errors.ts';
import { readBody, readText } from '../util/http-body.ts';
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
  /** The latest block the deployment has indexed, where the answer says (`indexedBlock`). */
  readonly indexed?: number;
}

/**
 * The number of the `graph-indexed` header graph-node sets on an answer: the latest block the deployment has indexed,
 * as JSON `{"hash", "number", "timestamp"}` or `null` (graph/src/data/query/result.rs at f27eb5f, `as_http_response`);
 * undefined where it is absent, longer than a block's description can be, or not that.
 */
export function indexedBlock(headers: { get(name: string): string | null } | undefined): number | undefined {
  const text = headers?.get('graph-indexed');
  if (!text || text.length > 512) return undefined;
  try {
    const n = (JSON.parse(text) as { number?: unknown } | null)?.number;
    return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** What a GraphQL client accepts (as graphql-request asks). */
const GRAPHQL_ACCEPT = 'application/graphql-response+json, application/json';

/** An answer that is not what a GraphQL endpoint sends: retried, since such answers pass. */
const GARBAGE = { kind: 'garbage', retryable: true } as const;

/** Whether a body is an HTML page (its first character other than white space is `<`), where JSON was expected. */
function isHtml(body: Uint8Array): boolean {
  for (const b of body) {
    if (b === 0x20 || (b >= 0x09 && b <= 0x0d)) continue;
    // Other white space (a byte-order mark, a Unicode space) is rare: the text decides.
    return b === 0x3c || (b >= 0x80 && /^\s*</.test(Buffer.from(body).toString('utf8')));
  }
  return false;
}

/** A JSON object that is not an array. */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An answer's `data`; a JSON answer with neither `data` nor `errors` is not a GraphQL answer (a proxy's own JSON, say). */
function answerData(r: { data?: unknown }): unknown {
  if (r.data === undefined || r.data === null)
    throw new UpstreamError('the answer holds no `data` (nor `errors`): not a GraphQL answer', GARBAGE);
  return r.data;
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

  /**
   * Sends one request and reads its answer's body within the budget, under the pace of the endpoint's governor and the
   * time-out: a status other than 200 and an HTML page are thrown as classified UpstreamErrors (not yet named by
   * endpoint: `classify` adds that).
   */
  private async send(
    endpoint: Endpoint,
    input: string | URL | Request,
    init?: RequestInit,
  ): Promise<Response & { raw: Buffer }> {
    const governor = this.governor(endpoint.pace ?? endpoint.host);
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
    let body: Buffer;
    try {
      body = await readBody(res, this.opts.maxAnswerBytes);
    } catch (e) {
      throw bodyError(e, this.opts);
    }
    if (isHtml(body)) throw htmlPage(body.toString('utf8'));
    return Object.assign(new Response(body, { status: 200, headers: res.headers }), { raw: body });
  }

  private client(endpoint: Endpoint): GraphQLClient {
    let c = this.clients.get(endpoint.url);
    if (!c) {
      c = new GraphQLClient(endpoint.url, {
        fetch: (input, init) => this.send(endpoint, input, init),
        headers: { 'user-agent': this.opts.userAgent, 'content-type': 'application/json' },
      });
      this.clients.set(endpoint.url, c);
    }
    return c;
  }

  /** Sends one request; throws a classified UpstreamError with the key redacted. */
  async request<T>(endpoint: Endpoint, query: string, variables: Record<string, unknown>): Promise<Answer<T>> {
    const c = this.client(endpoint);
    try {
      const r = await c.rawRequest<T>(query, variables);
      const indexed = indexedBlock(r.headers);
      return {
        data: answerData(r) as T,
        bytes: Buffer.byteLength(r.body),
        ...(indexed !== undefined ? { indexed } : {}),
      };
    } catch (e) {
      throw this.classify(e, endpoint);
    }
  }

  /**
   * Sends one request as `request` does, and returns its answer's body unread (a page, which the page checker parses
   * off the main thread). An answer that is not a page of rows alone is then judged by `answerData`.
   */
  async requestBody(
    endpoint: Endpoint,
    query: string,
    variables: Record<string, unknown>,
  ): Promise<{ body: Uint8Array; bytes: number; indexed?: number }> {
    try {
      const res = await this.send(endpoint, endpoint.url, {
        method: 'POST',
        headers: { 'user-agent': this.opts.userAgent, 'content-type': 'application/json', accept: GRAPHQL_ACCEPT },
        body: JSON.stringify({ query, variables }),
      });
      const indexed = indexedBlock(res.headers);
      return { body: res.raw, bytes: res.raw.byteLength, ...(indexed !== undefined ? { indexed } : {}) };
    } catch (e) {
      throw this.classify(e, endpoint);
    }
  }

  /**
   * The data of an answer's body, judged as graphql-request judges the answers of `request`: GraphQL errors, JSON
   * that is not an answer and an answer without data are thrown as classified UpstreamErrors.
   */
  answerData<T>(endpoint: Endpoint, body: Uint8Array): T {
    let v: unknown;
    try {
      v = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
      if (!isPlainObject(v)) throw new UpstreamError('the answer is not a JSON object: not a GraphQL answer', GARBAGE);
    } catch (e) {
      throw this.classify(e, endpoint);
    }
    const errors = v.errors;
    if (Array.isArray(errors) ? errors.length > 0 : Boolean(errors)) throw this.graphqlErrors([errors].flat(), 200);
    try {
      if (v.data !== null && v.data !== undefined && !isPlainObject(v.data))
        throw new UpstreamError("the answer's `data` is not an object: not a GraphQL answer", GARBAGE);
      return answerData(v) as T;
    } catch (e) {
      throw this.classify(e, endpoint);
    }
  }

  /** An answer's GraphQL errors as one UpstreamError, their messages cleared of secrets. */
  private graphqlErrors(errors: readonly unknown[], status: number): UpstreamError {
    return graphqlError(
      errors.map((x) => redact(String((x as { message?: unknown } | null)?.message), this.opts.secrets)),
      status,
    );
  }

  private classify(e: unknown, endpoint: Endpoint): UpstreamError {
    const clean = (s: string) => redact(s, this.opts.secrets);
    // A refused key is the service's answer to every route: it names the host, not one route's URL (which, with its
    // `apikey=***`, read as where a key comes from).
    if (e instanceof UpstreamError && e.kind === 'auth')
      return new UpstreamError(
        clean(e.message).replace('the service refused', `the service at ${endpoint.host} refused`),
        {
          kind: e.kind,
          retryable: e.retryable,
          ...e.extra,
        },
      );
    if (e instanceof UpstreamError)
      return new UpstreamError(`${clean(e.message)} from ${endpoint.label}`, {
        kind: e.kind,
        retryable: e.retryable,
        ...e.extra,
      });
    if (e instanceof ClientError) {
      const errors = e.response.errors ?? [];
      if (errors.length) return this.graphqlErrors(errors, e.response.status);
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
