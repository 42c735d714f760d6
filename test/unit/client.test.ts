/**
 * The GraphQL client against a real HTTP server on loopback that answers each request as the test scripts it: every
 * way an answer can go wrong is classified (kind, retryable, status), carries the endpoint's label, and never the key.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.ts';
import { type Endpoint, UpstreamClient } from '../../src/upstream/client.ts';

const KEY = 'c0ffee00c0ffee00c0ffee00c0ffee00';
type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
let server: Server;
let base: string;
let handle: Handler = (_q, res) => res.end();
const seen: { ua: string | undefined; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ ua: req.headers['user-agent'], body });
      handle(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const endpoint = (): Endpoint => ({
  url: `${base}/subgraph?apikey=${KEY}`,
  label: `${base}/subgraph`,
  host: new URL(base).host,
});
const client = (extra: { signal?: AbortSignal; timeoutMs?: number; maxAnswerBytes?: number } = {}) =>
  new UpstreamClient({
    secrets: [KEY],
    userAgent: 'pool-export-test',
    timeoutMs: extra.timeoutMs ?? 5_000,
    maxAnswerBytes: extra.maxAnswerBytes ?? 1024 * 1024,
    ...(extra.signal ? { signal: extra.signal } : {}),
  });

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Handler => {
  return (_q, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
};

/** The error a request ends with, checked to be an UpstreamError free of the key. */
async function failure(c = client()): Promise<UpstreamError> {
  const e = await c.request(endpoint(), '{ pairs { id } }', {}).then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(UpstreamError);
  expect((e as Error).message).not.toContain(KEY);
  return e as UpstreamError;
}

describe('the upstream client', () => {
  it('returns the data and the body size, sends the query, variables and User-Agent', async () => {
    const body = JSON.stringify({ data: { pairs: [{ id: 'p1' }] } });
    handle = json(200, body);
    seen.length = 0;
    const r = await client().request<{ pairs: { id: string }[] }>(endpoint(), 'query q($n: Int) { pairs { id } }', {
      n: 3,
    });
    expect(r).toEqual({ data: { pairs: [{ id: 'p1' }] }, bytes: Buffer.byteLength(body) });
    expect(seen[0]!.ua).toBe('pool-export-test');
    expect(JSON.parse(seen[0]!.body)).toMatchObject({
      query: 'query q($n: Int) { pairs { id } }',
      variables: { n: 3 },
    });
  });

  it('401 and 403 are auth failures that are not retried; the key in the page is hidden', async () => {
    for (const status of [401, 403]) {
      handle = json(status, `bad key ${KEY}`);
      const e = await failure();
      expect([e.kind, e.retryable, e.extra.status]).toEqual(['auth', false, status]);
      expect(e.message).toBe(
        `the service at ${new URL(base).host} refused the API key (HTTP ${status}: bad key ***); set POOL_EXPORT_API_KEY to a valid key`,
      );
    }
  });

  it('429 is a retryable rate limit with its Retry-After, and slows the host governor down', async () => {
    handle = json(429, 'slow down', { 'retry-after': '7' });
    const c = client();
    const e = await failure(c);
    expect([e.kind, e.retryable, e.extra.retryAfterMs]).toEqual(['rate-limit', true, 7000]);
    const g = c.governors.get(new URL(base).host)!;
    expect(g.limited).toBe(1);
    expect(g.rate).toBeLessThan(Infinity);
    handle = json(429, 'slow down', { 'retry-after': 'soon' });
    expect((await failure(client())).extra.retryAfterMs).toBeUndefined();
  });

  it('a route with its own key keeps its own pace: a 429 on it slows no other route of the host', async () => {
    const c = client();
    const own: Endpoint = { ...endpoint(), url: `${base}/other?apikey=${KEY}`, pace: 'the own key' };
    handle = json(429, 'slow down');
    await expect(c.request(own, '{ pairs { id } }', {})).rejects.toThrow(UpstreamError);
    handle = json(200, { data: { pairs: [] } });
    await c.request(endpoint(), '{ pairs { id } }', {});
    expect([...c.governors].map(([k, g]) => [k, g.limited])).toEqual([
      ['the own key', 1],
      [new URL(base).host, 0],
    ]);
  });

  it('5xx and 408 are retried; other statuses are not', async () => {
    for (const [status, retryable] of [
      [500, true],
      [503, true],
      [408, true],
      [404, false],
      [400, false],
    ] as const) {
      handle = json(status, 'nope\n\n  nope');
      const e = await failure();
      expect([e.kind, e.retryable, e.extra.status], String(status)).toEqual(['http', retryable, status]);
      expect(e.message).toBe(`HTTP ${status}: nope nope from ${base}/subgraph`);
    }
  });

  it('an HTML page, text that is not JSON, and JSON without data are garbage, retried', async () => {
    handle = (_q, res) => res.end('  <html><title> Bad Gateway </title></html>');
    let e = await failure();
    expect([e.kind, e.retryable]).toEqual(['garbage', true]);
    expect(e.message).toBe(`answered with an HTML page ("Bad Gateway") instead of JSON from ${base}/subgraph`);
    handle = json(200, '{"data": {"pairs": [');
    e = await failure();
    expect([e.kind, e.retryable]).toEqual(['garbage', true]);
    expect(e.message).toMatch(new RegExp(`^answer from ${base}/subgraph is not valid JSON \\(`));
    handle = json(200, { result: 1 });
    e = await failure();
    expect([e.kind, e.retryable]).toEqual(['garbage', true]);
    expect(e.message).toBe(`the answer holds no \`data\` (nor \`errors\`): not a GraphQL answer from ${base}/subgraph`);
  });

  it('GraphQL errors: auth, retryable store errors, and schema drift that names the command', async () => {
    handle = json(200, { errors: [{ message: `auth error: invalid key ${KEY}` }] });
    let e = await failure();
    expect([e.kind, e.retryable]).toEqual(['auth', false]);
    expect(e.message).toContain('auth error: invalid key ***');
    handle = json(200, { errors: [{ message: 'Store error: database unavailable' }] });
    e = await failure();
    expect([e.kind, e.retryable]).toEqual(['graphql', true]);
    handle = json(200, { errors: [{ message: 'Type `Pair` has no field `tvl`' }] });
    e = await failure();
    expect([e.kind, e.retryable]).toEqual(['graphql', false]);
    expect(e.message).toContain('run `pool-export schema check`');
  });

  it('a page request returns the body as it came, and answerData judges it as request judges the same answer', async () => {
    const page = JSON.stringify({ data: { rows: [{ id: 'a', name: 'é\u0000' }] } });
    handle = json(200, page);
    const c = client();
    const raw = await c.requestBody(endpoint(), 'query P { rows: pairs { id } }', { first: 2 });
    expect(Buffer.from(raw.body).toString('utf8')).toBe(page);
    expect(raw.bytes).toBe(Buffer.byteLength(page));
    expect(JSON.parse(seen.at(-1)!.body)).toEqual({ query: 'query P { rows: pairs { id } }', variables: { first: 2 } });
    expect(seen.at(-1)!.ua).toBe('pool-export-test');
    /** What `request` makes of an answer, and what `answerData` makes of the same body. */
    const both = async (answer: string) => {
      handle = json(200, answer);
      const outcome = (p: Promise<unknown>) =>
        p.then(
          (data) => ({ data }),
          (e: UpstreamError) => ({ kind: e.kind, retryable: e.retryable, message: e.message }),
        );
      const viaRequest = await outcome(c.request(endpoint(), '{ pairs { id } }', {}).then((r) => r.data));
      const body = (await c.requestBody(endpoint(), '{ pairs { id } }', {})).body;
      const viaBody = await outcome(Promise.resolve().then(() => c.answerData(endpoint(), body)));
      return [viaRequest, viaBody];
    };
    for (const answer of [
      page,
      JSON.stringify({ data: { rows: [] }, errors: [] }),
      JSON.stringify({ data: { rows: [] }, extensions: { cost: 1 } }),
      JSON.stringify({ errors: [{ message: `auth error: invalid key ${KEY}` }] }),
      JSON.stringify({ data: null, errors: [{ message: 'Store error: database unavailable' }] }),
      JSON.stringify({ errors: [{ message: 'Type `Pair` has no field `tvl`' }, { message: 'Query timed out' }] }),
      JSON.stringify({ result: 1 }),
      JSON.stringify({ data: null }),
      '{"data": {"rows": [',
    ]) {
      const [viaRequest, viaBody] = await both(answer);
      expect(viaBody).toEqual(viaRequest);
      expect(JSON.stringify(viaBody)).not.toContain(KEY);
    }
    // Shapes graphql-request calls a failed request, and answerData garbage: both retried.
    for (const odd of ['[1]', 'null', '{"data": [1]}']) {
      const [viaRequest, viaBody] = await both(odd);
      expect(viaRequest).toMatchObject({ retryable: true });
      expect(viaBody).toMatchObject({ kind: 'garbage', retryable: true });
    }
    // An HTML page is refused before anything reads it as a page.
    handle = (_q, res) => res.end('\n <html><title>Gateway</title></html>');
    const html = await c.requestBody(endpoint(), '{ pairs { id } }', {}).catch((e: UpstreamError) => e);
    expect(html).toMatchObject({
      kind: 'garbage',
      message: `answered with an HTML page ("Gateway") instead of JSON from ${base}/subgraph`,
    });
  });

  it('an answer over the byte budget is garbage; a body that stalls times out; a dropped connection is a network error', async () => {
    handle = json(200, { data: { pairs: 'x'.repeat(4096) } });
    let e = await failure(client({ maxAnswerBytes: 1024 }));
    expect([e.kind, e.retryable]).toEqual(['garbage', true]);
    expect(e.message).toContain('the budget for one answer (maxAnswerBytes');
    handle = (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":');
    };
    e = await failure(client({ timeoutMs: 300 }));
    expect([e.kind, e.retryable]).toEqual(['timeout', true]);
    expect(e.message).toBe(
      `the answer did not finish within 300 ms (its headers came, its body did not) from ${base}/subgraph`,
    );
    handle = () => {};
    e = await failure(client({ timeoutMs: 300 }));
    expect([e.kind, e.retryable]).toEqual(['timeout', true]);
    expect(e.message).toBe(`no answer within 300 ms from ${base}/subgraph`);
    handle = (req) => req.socket.destroy();
    e = await failure();
    expect([e.kind, e.retryable]).toEqual(['network', true]);
    expect(e.message).toMatch(new RegExp(`^connection failed to ${base}/subgraph: `));
  });

  it('a stop request is not retried', async () => {
    const stop = new AbortController();
    handle = () => stop.abort();
    const e = await failure(client({ signal: stop.signal }));
    expect([e.kind, e.retryable, e.message]).toEqual(['stopped', false, 'stopped on request']);
  });

  it('a closed port is unreachable and retried; a port HTTP refuses is not', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const c = client();
    const at = (p: number): Endpoint => ({
      url: `http://127.0.0.1:${p}/x?k=${KEY}`,
      label: `http://127.0.0.1:${p}/x`,
      host: `127.0.0.1:${p}`,
    });
    let e = (await c.request(at(port), '{ a }', {}).catch((x) => x)) as UpstreamError;
    expect([e.kind, e.retryable]).toEqual(['unreachable', true]);
    expect(e.message).toMatch(
      new RegExp(`^the upstream host 127.0.0.1:${port} could not be reached \\(.*ECONNREFUSED`),
    );
    e = (await c.request(at(6000), '{ a }', {}).catch((x) => x)) as UpstreamError;
    expect([e.kind, e.retryable]).toEqual(['unreachable', false]);
    expect(e.message).toContain('uses a port that HTTP clients refuse');
  });
});
