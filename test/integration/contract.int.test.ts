/** Contract: every query the exporter generates is valid against the upstream's introspected schema. */
import { buildClientSchema, getIntrospectionQuery, type IntrospectionQuery, parse, validate } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { LIST_QUERY, type PageShape, pageQuery } from '../../src/export/queries.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { BLOCK_BY_HASH_QUERY, collectionRoots, HEAD_QUERY, PROBE_QUERY } from '../../src/upstream/endpoint-probe.ts';
import type { TypeRef } from '../../src/upstream/schema-drift.ts';
import { post, subgraphPath } from '../support/sandbox-client.ts';

let sb: SandboxProcess;
beforeAll(async () => {
  sb = await startSandbox(['--scale', '200']);
});
afterAll(async () => sb?.stop());

async function introspect(path: string) {
  const r = await post(sb, path, { query: getIntrospectionQuery() });
  const data = r.body.data as unknown as IntrospectionQuery;
  const query = data.__schema.types.find((t) => t.name === 'Query') as unknown as {
    fields: { name: string; type: TypeRef }[];
  };
  return { api: buildClientSchema(data), roots: collectionRoots(query.fields) };
}

describe('generated queries validate against the introspected schema', () => {
  it.each(['dodoex', 'token', 'mine'])('schema %s', async (schema) => {
    const { api, roots } = await introspect(subgraphPath(sb, 1, schema));
    expect(validate(api, parse(HEAD_QUERY))).toEqual([]);
    expect(validate(api, parse(BLOCK_BY_HASH_QUERY))).toEqual([]);
    expect(validate(api, parse(PROBE_QUERY))).toEqual([]);
    for (const d of DATASETS.filter((x) => x.schema === schema)) {
      const shapes: PageShape[] = !d.seq
        ? ['id']
        : d.kind === 'mutable'
          ? ['seq-first', 'seq-next', 'id', 'null-id', 'changed-since']
          : ['seq-first', 'seq-next', 'range-first', 'range-next', 'id'];
      for (const shape of shapes) {
        expect(
          validate(api, parse(pageQuery(d, roots.get(d.entity)!, shape))).map(
            (e) => `${d.name} ${shape}: ${e.message}`,
          ),
        ).toEqual([]);
      }
    }
  });

  it('liquidity list', async () => {
    const { api } = await introspect(`/graphql?opname=FetchLiquidityList&apikey=${sb.apiKey}`);
    expect(validate(api, parse(LIST_QUERY))).toEqual([]);
  });
});
