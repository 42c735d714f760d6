import { readFileSync } from 'node:fs';
import { type GraphQLSchema, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { DATASETS, type Dataset, findDataset } from '../../src/catalog/catalog.ts';
import { subgraphDatasetsOf } from '../../src/catalog/subgraph-datasets.ts';
import { firstId, type PageShape, pageQuery } from '../../src/export/queries.ts';
import { buildApiSchema } from '../../src/sandbox/api-schema.ts';
import { rootNames } from '../../src/sandbox/naming.ts';
import { loadSchemaModel, parseSchemaModel, type SchemaModel } from '../../src/schemas/entity-model.ts';
import { EVERY_TYPE_SCHEMA } from '../support/every-type.ts';

describe('page queries', () => {
  it('continue a keyset on (seq, id) with or-branches, never a strict seq_gt alone and never skip', () => {
    const q = pageQuery(findDataset('dodoex.swaps')!, 'swaps', 'seq-next');
    expect(q).toContain('where: { or: [{ timestamp_gt: $seq }, { timestamp: $seq, id_gt: $id }] }');
    expect(q).toContain('block: { number: $block }');
    expect(q).not.toContain('skip');
  });

  it.each(DATASETS.filter((d) => d.kind !== 'list').map((d) => [d.name, d] as const))(
    '%s pins every page to a block and selects every column',
    (_name, d) => {
      for (const shape of d.seq ? (['seq-first', 'seq-next', 'id'] as const) : (['id'] as const)) {
        const q = pageQuery(d, 'rootField', shape);
        expect(q).toContain('rows: rootField(');
        expect(q).toContain('block: { number: $block }');
        for (const c of d.columns) expect(q).toContain(c.select);
      }
    },
  );

  /** The shapes a dataset's pagers send, written out by kind. */
  const shapesOf = (d: Dataset): PageShape[] =>
    d.aggregation
      ? ['agg-first', 'agg-next', 'agg-changed-first', 'agg-changed-next']
      : d.seq
        ? ['id', 'changed-since', 'null-id', 'seq-first', 'seq-next', 'range-first', 'range-next']
        : ['id', 'changed-since'];
  /** Each query of `datasets` checked against the API schema graph-node makes of `model` (the sandbox's). */
  const invalid = (model: SchemaModel, datasets: readonly Dataset[]) => {
    const api: GraphQLSchema = buildApiSchema(model);
    const out: string[] = [];
    for (const d of datasets)
      for (const shape of shapesOf(d)) {
        const errors = validate(api, parse(pageQuery(d, rootNames(d.entity, 'current').plural, shape)));
        for (const e of errors) out.push(`${d.name} ${shape}: ${e.message}`);
      }
    return out;
  };

  it('are valid against the API schema of their subgraph, in every shape, DODO’s and an added one with every type', () => {
    for (const schema of ['dodoex', 'token', 'mine'])
      expect(
        invalid(
          loadSchemaModel(schema),
          DATASETS.filter((d) => d.schema === schema),
        ),
      ).toEqual([]);
    const model = parseSchemaModel('every', readFileSync(EVERY_TYPE_SCHEMA, 'utf8'));
    const datasets = subgraphDatasetsOf('every', model);
    expect(datasets.filter((d) => d.aggregation).length).toBe(2);
    expect(invalid(model, datasets)).toEqual([]);
  });

  it('ask an aggregation’s rows changed since a block in both of its changed shapes, and no others', () => {
    const model = parseSchemaModel('every', readFileSync(EVERY_TYPE_SCHEMA, 'utf8'));
    const hour = subgraphDatasetsOf('every', model).find((d) => d.aggregation?.interval === 'hour')!;
    const asks = (shape: PageShape) =>
      pageQuery(hour, 'tokenPriceStats', shape).includes('_change_block: { number_gte: $since }');
    expect((['agg-first', 'agg-next', 'agg-changed-first', 'agg-changed-next'] as const).map(asks)).toEqual([
      false,
      false,
      true,
      true,
    ]);
    // Paged newest first: a shape of another dataset is refused, naming it.
    expect(() => pageQuery(hour, 'tokenPriceStats', 'seq-next')).toThrow(
      'every.token_price_stats_hour is an aggregation: it is paged newest first, not by seq-next',
    );
  });

  it('start a pass by id after every id: the empty text, or -2^63 for Int8 ids', () => {
    expect(firstId({ idType: 'String' })).toBe('');
    expect(firstId({})).toBe('');
    expect(firstId({ idType: 'Int8' })).toBe((-(2n ** 63n)).toString());
  });
});
