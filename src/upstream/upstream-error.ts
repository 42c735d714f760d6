/** Errors from the upstream, classified by what the runner should do with them. */
import { UpstreamError } from '../errors.ts';

/** graph-node and gateway messages that mean "try again": transient store, indexer or block-availability conditions. */
const RETRYABLE_GRAPHQL = [
  /^Store error/,
  /^indexing_error$/,
  /^bad indexers/,
  /Query timed out/,
  /service is overloaded/,
  /query is too expensive/,
  /is therefore not yet available/,
  /no block with that hash found/,
  /the chain was reorganized/,
  /Too many requests/i,
  /no indexers found/,
  /database unavailable/,
];

/**
 * graph-node's answer at a block a deployment that keeps little history has pruned (`block_queryable`,
 * graph/src/data/subgraph/mod.rs at f27eb5f; its manifest's `indexerHints: prune`): the earliest block it holds.
 */
const PRUNED =
  /only has data starting at block number (\d+) and data for block number (\d+) is therefore not available/;

/** The earliest block a `pruned` error says its deployment holds, or undefined for any other error. */
export function prunedFloor(e: unknown): number | undefined {
  for (let c = e; c instanceof Error; c = c.cause)
    if (c instanceof UpstreamError && c.kind === 'pruned') return c.extra.floor;
  return undefined;
}

/**
 * Why a check at a block cannot be made, where the deployment pruned it: one line for `verify`'s skipped checks, or
 * undefined for any other error.
 */
export function prunedSkip(e: unknown, block: number | null): string | undefined {
  const floor = prunedFloor(e);
  return floor === undefined ? undefined : prunedWhy(floor, block);
}

/** Why rows read at `block` cannot be checked on a deployment that holds blocks from `floor` on, in one line. */
export function prunedWhy(floor: number, block: number | null): string {
  return `the deployment keeps only recent history (its manifest's indexerHints.prune) and holds blocks from ${floor} on, not block ${block ?? '?'} where these rows were read: a verify soon after a run checks them`;
}

/** Classifies GraphQL `errors` of an otherwise well-formed answer. */
export function graphqlError(messages: string[], status: number): UpstreamError {
  const msg = messages.join('; ');
  const pruned = messages.map((m) => PRUNED.exec(m)).find((m) => m);
  if (pruned)
    return new UpstreamError(
      `the deployment no longer holds block ${pruned[2]}: it keeps only recent history (its manifest's indexerHints.prune) and holds blocks from ${pruned[1]} on (${msg})`,
      { kind: 'pruned', retryable: false, status, floor: Number(pruned[1]) },
    );
  if (messages.some((m) => m.startsWith('auth error:'))) {
    return new UpstreamError(
      `the gateway refused the API key (${msg}); set POOL_EXPORT_API_KEY to a valid gateway key (32 hex characters)`,
      { kind: 'auth', retryable: false, status },
    );
  }
  const retryable = messages.every((m) => RETRYABLE_GRAPHQL.some((re) => re.test(m)));
  // A query that no longer validates means the upstream schema changed under the catalog.
  const drift = messages.some((m) => /^Type `\w+` has no field `\w+`|^Unknown argument|^Cannot query field/.test(m));
  return new UpstreamError(
    `upstream answered with GraphQL errors: ${msg}${drift ? '. The upstream schema no longer matches the catalog: run `pool-export schema check` to see the drift (for a subgraph added by name, `pool-export subgraph refresh NAME` takes its new schema)' : ''}`,
    { kind: 'graphql', retryable, status },
  );
}

/** An HTML page where JSON was expected (a proxy or an error page in the way): retried, since such pages pass. */
export function htmlPage(text: string): UpstreamError {
  const title = /<title>([^<]{0,120})<\/title>/i.exec(text)?.[1]?.trim();
  return new UpstreamError(`answered with an HTML page${title ? ` ("${title}")` : ''} instead of JSON`, {
    kind: 'garbage',
    retryable: true,
  });
}

/** Classifies an HTTP status that is not 200. */
export function httpError(status: number, bodyText: string, retryAfter: string | null): UpstreamError {
  const snippet = bodyText.replace(/\s+/g, ' ').slice(0, 200);
  if (status === 401 || status === 403) {
    return new UpstreamError(
      `the service refused the API key (HTTP ${status}: ${snippet}); set POOL_EXPORT_API_KEY to a valid key`,
      { kind: 'auth', retryable: false, status },
    );
  }
  if (status === 429) {
    const secs = Number(retryAfter);
    return new UpstreamError(`rate limited (HTTP 429)`, {
      kind: 'rate-limit',
      retryable: true,
      status,
      ...(Number.isFinite(secs) && secs >= 0 ? { retryAfterMs: secs * 1000 } : {}),
    });
  }
  return new UpstreamError(`HTTP ${status}: ${snippet}`, {
    kind: 'http',
    retryable: status >= 500 || status === 408,
    status,
  });
}

export { redact } from '../util/redact.ts';
