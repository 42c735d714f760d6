/** Helpers for tests that talk to a sandbox process over HTTP. */
import type { SandboxEndpoint } from '../../src/sandbox/spawn.ts';
import { readJson, readText } from '../../src/util/http-body.ts';

/** Bytes one GraphQL answer of the sandbox may take here, as in the exporter (the default `maxAnswerBytes`). */
const ANSWER_BYTES = 48 * 1024 ** 2;
/** Bytes of one entity's rows from the control API: the largest test worlds hold a few hundred megabytes. */
const ROWS_BYTES = 1024 ** 3;

/** A GraphQL JSON answer with its HTTP status and headers. */
export interface Answer {
  status: number;
  headers: Headers;
  body: { data?: Record<string, any>; errors?: { message: string }[]; message?: string; error?: string };
}

/** POSTs a body to a path of the sandbox. */
export async function post(
  sb: Pick<SandboxEndpoint, 'url'>,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${sb.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: await readJson<Answer['body']>(res, ANSWER_BYTES) };
}

/** The self-hosted subgraph path of a chain and schema. */
export function subgraphPath(sb: Pick<SandboxEndpoint, 'apiKey'>, chainId: number, schema: string): string {
  return `/subgraph/graphql?chainId=${chainId}&schemaName=${schema}&apikey=${sb.apiKey}`;
}

/** Runs a subgraph query and returns its data, failing on errors. */
export async function query(
  sb: SandboxEndpoint,
  chainId: number,
  schema: string,
  q: string,
  variables?: Record<string, unknown>,
): Promise<Record<string, any>> {
  const a = await post(sb, subgraphPath(sb, chainId, schema), { query: q, variables });
  if (a.body.errors) throw new Error(`${a.body.errors[0]!.message}\nquery: ${q}`);
  return a.body.data!;
}

/** The first error message of a subgraph query (and asserts there is no data). */
export async function queryError(sb: SandboxEndpoint, chainId: number, schema: string, q: string): Promise<string> {
  const a = await post(sb, subgraphPath(sb, chainId, schema), { query: q });
  if (!a.body.errors) throw new Error(`expected an error for ${q}`);
  if ('data' in a.body) throw new Error('graph-node omits data when a query fails');
  return a.body.errors[0]!.message;
}

/** Every row of an entity at the head (or a block), from the control API. */
export async function allRows(
  sb: SandboxEndpoint,
  chainId: number,
  schema: string,
  entity: string,
  block?: number,
  interval?: string,
): Promise<Record<string, any>[]> {
  const at = `${block ? `&block=${block}` : ''}${interval ? `&interval=${interval}` : ''}`;
  const res = await fetch(`${sb.url}/_sandbox/rows?chainId=${chainId}&schema=${schema}&entity=${entity}${at}`);
  const text = await readText(res, ROWS_BYTES);
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/**
 * Waits until the sandbox has served at least `n` requests since its counters were last reset: tests interrupt a run
 * once it is under way, whatever the machine's speed, instead of after a fixed sleep.
 */
export async function waitForRequests(sb: SandboxEndpoint, n: number, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while ((await sb.control<{ requests: number }>('stats')).requests < n) {
    if (Date.now() > until) throw new Error(`the sandbox did not serve ${n} requests within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
