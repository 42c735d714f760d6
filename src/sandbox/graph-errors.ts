/** graph-node's error texts, and the error type the executor raises to answer with `errors` and no `data`. */

/** A query error reported to the client as `{"errors":[{"message":…}]}` with HTTP 200. */
export class QueryError extends Error {
  constructor(
    message: string,
    readonly locations?: readonly { line: number; column: number }[],
  ) {
    super(message);
    this.name = 'QueryError';
  }
}

/** ``The `first` argument must be between 0 and 1000, but is 1001`` */
export function rangeError(arg: string, max: number, actual: number): QueryError {
  return new QueryError(`The \`${arg}\` argument must be between 0 and ${max}, but is ${actual}`);
}

/** The v0.40+ text for `or` beside column filters. */
export function mixedOrError(columns: readonly string[]): QueryError {
  const names = columns.map((c) => `'${c}'`).join(', ');
  return new QueryError(
    `Cannot mix column filters with 'or' operator at the same level. Found column filter(s) ${names} alongside 'or' operator.\n\n` +
      `Instead of:\nwhere: { ${columns[0]}: value, or: [...] }\n\nUse:\nwhere: { or: [{ ${columns[0]}: value, ... }, { ${columns[0]}: value, ... }] }`,
  );
}

/** ``Failed to decode `Bytes` value: `…` `` and friends. */
export function decodeError(what: string, msg: string): QueryError {
  return new QueryError(`Failed to decode \`${what}\` value: \`${msg}\``);
}

/** Block not yet indexed. */
export function blockAheadError(arg: string, deployment: string, head: number, wanted: number): QueryError {
  return decodeError(
    `block.${arg}`,
    `subgraph ${deployment} has only indexed up to block number ${head} and data for block number ${wanted} is therefore not yet available`,
  );
}

/** Block before the start of the subgraph. */
export function blockBeforeError(deployment: string, first: number, wanted: number): QueryError {
  return decodeError(
    'block.number',
    `subgraph ${deployment} only has data starting at block number ${first} and data for block number ${wanted} is therefore not available`,
  );
}
