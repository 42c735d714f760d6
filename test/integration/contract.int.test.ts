/** Contract: every query the exporter generates is valid against the upstream's introspected schema. */
import { buildClientSchema, getIntrospectionQuery, parse, validate, type IntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { LIST_QUERY, META_QUERY, pageQuery } from '../../src/export/queries.ts';
import { startSandbox, type SandboxProcess } from '../../src/sandbox/spawn.ts';
import { post, subgraphPath } from '../support/sandbox-client.ts';

let sb: SandboxProcess;
beforeAll(async () => {
  sb = await startSandbox(['--scale', '200']);
});
afterAll(async () => sb?.stop());

async function introspect(path: string) {
  const r = await post(sb, path, { query: getIntrospectionQuery() });
  return buildClientSchema(r.body.data as unknown as IntrospectionQuery);
}

describe('generated queries validate against the introspected schema', () => {
  it.each(['dodoex', 'token', 'mine-v3'])('schema %s', async (schema) => {
    const api = await introspect(subgraphPath(sb, 1, schema));
    expect(validate(api, parse(META_QUERY))).toEqual([]);
    for (const d of DATASETS.filter((x) => x.schema === schema)) {
      for (const shape of d.seq ? (['seq-first', 'seq-next', 'range-first', 'range-next', 'id'] as const) : (['id'] as const)) {
        expect(validate(api, parse(pageQuery(d, shape))).map((e) => `${d.name} ${shape}: ${e.message}`)).toEqual([]);
      }
    }
  });

  it('liquidity list', async () => {
    const api = await introspect(`/graphql?opname=FetchLiquidityList&apikey=${sb.apiKey}`);
    expect(validate(api, parse(LIST_QUERY))).toEqual([]);
  });
});
