/**
 * Conformance of the sandbox with graph-node, against the sandbox started as a real process: filters, and blocks,
 * `_meta`, new blocks and reorganisations.
 */

import { describe, expect, it } from 'vitest';
import { loadSchemaModel } from '../../src/schemas/entity-model.ts';
import * as X from '../../src/util/exact.ts';
import { plural, sb, useConformanceSandbox } from '../support/conformance-sandbox.ts';
import { allRows, post, query, queryError, subgraphPath } from '../support/sandbox-client.ts';

useConformanceSandbox();

describe('filters', () => {
  const cases: [string, string, (r: Record<string, any>) => boolean][] = [
    ['Token', 'symbol_contains_nocase: "uni"', (r) => r.symbol.toLowerCase().includes('uni')],
    ['Token', 'symbol_starts_with: "TK"', (r) => r.symbol.startsWith('TK')],
    ['Token', 'symbol_not_ends_with: "1"', (r) => !r.symbol.endsWith('1')],
    ['Token', 'decimals_in: ["6", "8"]', (r) => ['6', '8'].includes(r.decimals)],
    ['Token', 'usdPrice_lt: "1"', (r) => X.compare(X.parse(r.usdPrice), X.dec(1)) < 0],
    ['Pair', 'type_not: "VIRTUAL"', (r) => r.type !== 'VIRTUAL'],
    ['Pair', 'owner: null', (r) => r.owner === null],
    [
      'Pair',
      'baseReserve_gte: "1000000000000000000000"',
      (r) => X.compare(X.parse(r.baseReserve), X.parse('1e21')) >= 0,
    ],
    ['Pair', 'type_not_in: ["DVM", "DSP"]', (r) => !['DVM', 'DSP'].includes(r.type)],
    ['Pair', 'creator_contains: "aa"', (r) => r.creator.slice(2).match(/../g).includes('aa')],
    [
      'Swap',
      'timestamp_gt: "1766000000", timestamp_lte: "1766500000"',
      (r) => BigInt(r.timestamp) > 1766000000n && BigInt(r.timestamp) <= 1766500000n,
    ],
    [
      'Transaction',
      'tokens_contains: ["0xc2132d05d31c914a87c6611c10748aeb04b58e8f"]',
      (r) => r.tokens.includes('0xc2132d05d31c914a87c6611c10748aeb04b58e8f'),
    ],
    ['LiquidityHistory', 'baseAmountChange: null', (r) => r.baseAmountChange === null],
    [
      'Swap',
      'or: [{ amountIn_lt: "1" }, { amountOut_lt: "1" }]',
      (r) => X.compare(X.parse(r.amountIn), X.dec(1)) < 0 || X.compare(X.parse(r.amountOut), X.dec(1)) < 0,
    ],
    [
      'Swap',
      'and: [{ logIndex_gt: "100" }, { logIndex_lt: "120" }]',
      (r) => Number(r.logIndex) > 100 && Number(r.logIndex) < 120,
    ],
  ];
  it.each(cases)('%s where { %s } matches the rows it should', async (entity, where, pred) => {
    const e = loadSchemaModel('dodoex').byName.get(entity)!;
    const expected = (await allRows(sb, 137, 'dodoex', entity))
      .filter(pred)
      .map((r) => r.id)
      .sort();
    const got: string[] = [];
    for (let skip = 0; ; skip += 1000) {
      const page = (
        await query(sb, 137, 'dodoex', `{ ${plural(e)}(first: 1000, skip: ${skip}, where: { ${where} }) { id } }`)
      )[plural(e)];
      got.push(...page.map((r: { id: string }) => r.id));
      if (page.length < 1000 || skip >= 5000) break;
    }
    expect(expected.length).toBeLessThanOrEqual(6000);
    expect(got.sort()).toEqual(expected);
  });

  it('filters through a reference with field_', async () => {
    const pairs = new Map((await allRows(sb, 137, 'dodoex', 'Pair')).map((p) => [p.id, p]));
    const expected = (await allRows(sb, 137, 'dodoex', 'LiquidityPosition')).filter(
      (r) => pairs.get(r.pair)?.type === 'DVM',
    ).length;
    const got = (
      await query(
        sb,
        137,
        'dodoex',
        '{ liquidityPositions(first: 1000, where: { pair_: { type: "DVM" } }) { id pair { type } } }',
      )
    ).liquidityPositions;
    expect(got.length).toBe(Math.min(expected, 1000));
    expect(got.every((r: any) => r.pair.type === 'DVM')).toBe(true);
  });

  it('rejects or beside column filters with the v0.40 text', async () => {
    const msg = await queryError(
      sb,
      1,
      'dodoex',
      '{ swaps(where: { pair: "0x00", or: [{ amountIn_gt: "1" }] }) { id } }',
    );
    expect(msg).toMatch(
      /^Cannot mix column filters with 'or' operator at the same level\. Found column filter\(s\) 'pair' alongside 'or' operator\.\n\n/,
    );
  });

  it('rejects bad Bytes and unknown fields with graph-node texts', async () => {
    expect(await queryError(sb, 1, 'dodoex', '{ swaps(where: { from: "0xZZ" }) { id } }')).toBe(
      'Failed to decode `Bytes` value: `0xZZ`',
    );
    expect(await queryError(sb, 1, 'dodoex', '{ swaps { nope } }')).toBe('Type `Swap` has no field `nope`');
  });

  it('filters by _change_block', async () => {
    const head = (await query(sb, 1, 'dodoex', '{ _meta { block { number } } }'))._meta.block.number;
    const rows = (
      await query(
        sb,
        1,
        'dodoex',
        `{ pairs(first: 1000, where: { _change_block: { number_gte: ${head - 200} } }) { id updatedAt } }`,
      )
    ).pairs;
    const all = (await query(sb, 1, 'dodoex', '{ pairs(first: 1000) { id updatedAt } }')).pairs;
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThan(all.length);
  });
});

describe('blocks, _meta, new blocks and reorgs', () => {
  it('time-travels with block: {number}, and _meta has no hash for a number constraint', async () => {
    const { _meta } = await query(sb, 10, 'dodoex', '{ _meta { block { number hash timestamp } hasIndexingErrors } }');
    const past = _meta.block.number - 50_000;
    const d = await query(
      sb,
      10,
      'dodoex',
      `{ old: swaps(first: 1000, orderBy: timestamp, orderDirection: desc, block: { number: ${past} }) { id timestamp } _meta(block: { number: ${past} }) { block { number hash } } }`,
    );
    expect(d._meta.block).toEqual({ number: past, hash: null });
    expect(_meta.hasIndexingErrors).toBe(false);
    expect(_meta.block.hash).toMatch(/^0x[0-9a-f]{64}$/);
    const maxTs = Math.max(...d.old.map((r: { timestamp: string }) => Number(r.timestamp)));
    expect(maxTs).toBeLessThanOrEqual(_meta.block.timestamp - 50_000 * 2);
  });

  it('answers blocks that are not indexed with the exact texts', async () => {
    const head = (await query(sb, 43114, 'dodoex', '{ _meta { block { number } deployment } }'))._meta;
    expect(
      await queryError(sb, 43114, 'dodoex', `{ swaps(block: { number: ${head.block.number + 10} }) { id } }`),
    ).toBe(
      `Failed to decode \`block.number\` value: \`subgraph ${head.deployment} has only indexed up to block number ${head.block.number} and data for block number ${head.block.number + 10} is therefore not yet available\``,
    );
    expect(
      await queryError(sb, 43114, 'dodoex', `{ swaps(block: { number_gte: ${head.block.number + 1} }) { id } }`),
    ).toMatch(/^Failed to decode `block.number_gte` value: `subgraph Qm/);
    expect(await queryError(sb, 43114, 'dodoex', `{ swaps(block: { hash: "0x${'12'.repeat(32)}" }) { id } }`)).toBe(
      'Failed to decode `block.hash` value: `no block with that hash found`',
    );
  });

  it('brings new rows with new blocks, and a reorg rewrites the last blocks', async () => {
    const chainId = 1285;
    const q =
      '{ swaps(first: 1000, orderBy: timestamp, orderDirection: desc) { id timestamp } _meta { block { number hash } } }';
    const before = await query(sb, chainId, 'dodoex', q);
    await sb.control('advance', { blocks: 2000, chainId });
    const after = await query(sb, chainId, 'dodoex', q);
    expect(after._meta.block.number).toBe(before._meta.block.number + 2000);
    const fresh = after.swaps.filter(
      (r: { timestamp: string }) => Number(r.timestamp) > Number(before.swaps[0].timestamp),
    );
    expect(fresh.length).toBeGreaterThan(0);
    const oldHash = after._meta.block.hash;
    await sb.control('reorg', { depth: 1500, chainId });
    const reorged = await query(sb, chainId, 'dodoex', q);
    expect(reorged._meta.block.hash).not.toBe(oldHash);
    expect(await queryError(sb, chainId, 'dodoex', `{ swaps(block: { hash: "${oldHash}" }) { id } }`)).toMatch(
      /no block with that hash found/,
    );
    const ids = new Set(reorged.swaps.map((r: { id: string }) => r.id));
    expect(fresh.some((r: { id: string }) => !ids.has(r.id))).toBe(true);
  });

  it('sends the graph-indexed header', async () => {
    const a = await post(sb, subgraphPath(sb, 1, 'dodoex'), { query: '{ _meta { block { number } } }' });
    const h = JSON.parse(a.headers.get('graph-indexed')!);
    expect(h.number).toBe(a.body.data!._meta.block.number);
  });
});
