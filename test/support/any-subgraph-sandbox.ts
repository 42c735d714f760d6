/**
 * A sandbox serving a subgraph of the every-type fixture schema on two chains, for the tests of a subgraph of any
 * schema in the sandbox (test/unit/sandbox-any-subgraph*.test.ts), and how they ask it: a GraphQL query at a URL it
 * prints, every row of an entity at a block from `/_sandbox/rows`, and the head. `sb` and `urls` are live bindings.
 */

import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect } from 'vitest';
import { rootNames } from '../../src/sandbox/naming.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { parseSchemaModel } from '../../src/schemas/entity-model.ts';

export const FIXTURE = fileURLToPath(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url));
export const MODEL = parseSchemaModel('pools', (await import('node:fs')).readFileSync(FIXTURE, 'utf8'));

export type Row = Record<string, unknown> & { id: string; __block: number };

export let sb: SandboxProcess;
export let urls: string[];

export async function gql<T>(url: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: { message: string }[] };
  if (body.errors) throw new Error(body.errors.map((e) => e.message).join('; '));
  return body.data!;
}

export async function rows(entity: string, chain: string, block?: number): Promise<Row[]> {
  const at = block === undefined ? '' : `&block=${block}`;
  const res = await fetch(`${sb.url}/_sandbox/rows?subgraph=pools&entity=${entity}&chainId=${chain}${at}`);
  expect(res.status).toBe(200);
  return (await res.text())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Row);
}

export const plural = (entity: string) => rootNames(entity, 'current').plural;
export const head = async (url: string) =>
  (await gql<{ _meta: { block: { number: number } } }>(url, '{ _meta { block { number } } }'))._meta.block.number;

/** The sandbox, started before the calling file's tests and stopped after them. */
export function useAnySubgraphSandbox(): void {
  beforeAll(async () => {
    sb = await startSandbox(['--scale', '20000', '--chains', '1,56', '--subgraph', `pools=${FIXTURE}`]);
    urls = [...sb.banner.matchAll(/^subgraph pools: (\S+)$/gm)].map((m) => m[1]!);
  });
  afterAll(async () => sb?.stop());
}
