/** Conformance of the sandbox with graph-node and the service, against the sandbox started as a real process. */
import { GraphQLClient, gql } from 'graphql-request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rootNames } from '../../src/sandbox/naming.ts';
import { LIQUIDITY_LIST_BODY, SEED_QUERIES } from '../../src/sandbox/seed-queries.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { KNOWN_CHAINS } from '../../src/sandbox/timeline.ts';
import { type EntityModel, loadSchemaModel } from '../../src/schemas/entity-model.ts';
import * as X from '../../src/util/exact.ts';
import { allRows, post, query, queryError, subgraphPath } from '../support/sandbox-client.ts';

const SCHEMAS = ['dodoex', 'token', 'mine'] as const;

/** The collection root of an entity on the self-hosted route (the sandbox's default profile: graph-node's current naming). */
const plural = (e: EntityModel) => rootNames(e.name, 'current').plural;
const CHAINS = KNOWN_CHAINS.map((c) => c.chainId);
const ENCODING: Record<string, RegExp> = {
  BigInt: /^-?\d+$/,
  BigDecimal: /^-?\d+(\.\d*[1-9])?$/,
  Bytes: /^0x([0-9a-f]{2})*$/,
  ID: /^.+$/,
};

let sb: SandboxProcess;
beforeAll(async () => {
  sb = await startSandbox(['--scale', '3000', '--burst', '1100']);
});
afterAll(async () => sb?.stop());

function scalarSelection(e: EntityModel): string {
  return e.fields
    .filter((f) => !f.ref)
    .map((f) => f.name)
    .join(' ');
}

function checkEncoding(e: EntityModel, row: Record<string, unknown>): void {
  for (const f of e.fields.filter((x) => !x.ref)) {
    const v = row[f.name];
    if (v === null) {
      expect(f.nonNull, `${e.name}.${f.name} is null but non-null in the schema`).toBe(false);
      continue;
    }
    if (f.list) continue;
    if (f.type === 'Int') expect(typeof v, `${e.name}.${f.name}`).toBe('number');
    else if (f.type === 'Boolean') expect(typeof v).toBe('boolean');
    else if (ENCODING[f.type]) expect(v, `${e.name}.${f.name}`).toMatch(ENCODING[f.type]!);
  }
}

describe.each(SCHEMAS)('schema %s', (schema) => {
  const model = loadSchemaModel(schema);
  describe.each(CHAINS)('chain %i', (chainId) => {
    it('serves every entity with graph-node value encodings', async () => {
      const q = `{ ${model.entities.map((e) => `${plural(e)}(first: 3) { ${scalarSelection(e)} }`).join(' ')} _meta { block { number } deployment } }`;
      const data = await query(sb, chainId, schema, q);
      for (const e of model.entities) for (const row of data[plural(e)]) checkEncoding(e, row);
      expect(data._meta.deployment).toMatch(/^Qm[1-9A-HJ-NP-Za-km-z]{44}$/);
    });

    it('has unique ids in every entity, and every non-null reference resolves', async () => {
      const ids = new Map<string, Set<string>>();
      const rows = new Map<string, Record<string, any>[]>();
      for (const e of model.entities) {
        const all = await allRows(sb, chainId, schema, e.name);
        rows.set(e.name, all);
        ids.set(e.name, new Set(all.map((r) => r.id)));
        expect(ids.get(e.name)!.size, `${e.name} ids`).toBe(all.length);
      }
      for (const e of model.entities) {
        for (const f of e.fields.filter((x) => x.ref && !x.list && !x.derivedFrom)) {
          for (const r of rows.get(e.name)!) {
            if (r[f.name] === null) expect(f.nonNull, `${e.name}.${f.name} is null`).toBe(false);
            else expect(ids.get(f.type)!.has(r[f.name]), `${e.name}.${f.name} -> ${f.type} ${r[f.name]}`).toBe(true);
          }
        }
      }
    });

    it('orders by id ascending when no orderBy is given, and ignores orderDirection alone', async () => {
      const e = model.entities.find((x) => x.name === 'Token' || x.name === 'MinePool')!;
      const a = (await query(sb, chainId, schema, `{ ${plural(e)}(first: 50, orderDirection: desc) { id } }`))[
        plural(e)
      ].map((r: { id: string }) => r.id);
      expect(a.length).toBeGreaterThan(1);
      expect(a).toEqual([...a].sort((x: string, y: string) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
    });
  });
});

describe.each(SCHEMAS)('updatedAt of schema %s', (schema) => {
  it('changes whenever a row changes (rows with the same updatedAt at two blocks are identical)', async () => {
    const model = loadSchemaModel(schema);
    const head = (await query(sb, 1, schema, '{ _meta { block { number } } }'))._meta.block.number;
    let compared = 0;
    for (const e of model.entities.filter(
      (x) => x.field.has('updatedAt') && !['DodoZoo', 'TradingIncentive', 'DodoToken'].includes(x.name),
    )) {
      const before = new Map((await allRows(sb, 1, schema, e.name, head - 200)).map((r) => [r.id, r]));
      for (const r of await allRows(sb, 1, schema, e.name, head)) {
        const old = before.get(r.id);
        // A null updatedAt says nothing about change: the real mappings leave it unset on some entities.
        if (!old || old.updatedAt !== r.updatedAt || r.updatedAt === null) continue;
        const { __block: _a, ...now } = r;
        const { __block: _b, ...then } = old;
        expect(now, `${e.name} ${r.id} changed without a new updatedAt`).toEqual(then);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(0);
  });
});

describe('null updatedAt', () => {
  // DODOEX/dodoex_v2_subgraph 0eb5baca: handleChargeMaintainerFee (classicPoolFromV1.ts) writes MaintainerFeeTx and
  // MaintainerEarnings without updatedAt; createLpToken (helpers.ts) makes LP tokens without it, and only later
  // deposits and withdrawals (classicPoolFromV1.ts, pool.ts) set it. Every other entity sets it when it saves.
  it('is served exactly where the real mappings leave it null', async () => {
    for (const schema of SCHEMAS) {
      for (const e of loadSchemaModel(schema).entities.filter((x) => x.field.has('updatedAt'))) {
        const nulls = (await allRows(sb, 1, schema, e.name)).map((r) => r.updatedAt === null);
        const label = `${schema}.${e.name}`;
        if (['MaintainerFeeTx', 'MaintainerEarnings'].includes(e.name))
          expect(nulls.length && nulls.every(Boolean), label).toBe(true);
        else if (e.name === 'LpToken')
          expect([nulls.some(Boolean), nulls.some((n) => !n)], label).toEqual([true, true]);
        else expect(nulls.some(Boolean), label).toBe(false);
      }
    }
  });
});

describe('first and skip', () => {
  it('defaults first to 100', async () => {
    expect((await query(sb, 1, 'dodoex', '{ swaps { id } }')).swaps).toHaveLength(100);
  });
  it.each([
    ['{ swaps(first: 1001) { id } }', 'The `first` argument must be between 0 and 1000, but is 1001'],
    ['{ swaps(first: 0) { id } }', 'The `first` argument must be between 0 and 1000, but is 0'],
    ['{ swaps(skip: 6000) { id } }', 'The `skip` argument must be between 0 and 5000, but is 6000'],
  ])('%s answers the exact error with no data', async (q, text) => {
    expect(await queryError(sb, 1, 'dodoex', q)).toBe(text);
  });
});

describe('ordering and keyset paging', () => {
  it('pages every swap by (timestamp, id) through a burst of more than 1000 rows in one second', async () => {
    const total = await allRows(sb, 56, 'dodoex', 'Swap');
    const perTs = new Map<string, number>();
    for (const r of total) perTs.set(r.timestamp, (perTs.get(r.timestamp) ?? 0) + 1);
    expect(Math.max(...perTs.values())).toBeGreaterThan(1000);
    const seen: { id: string; timestamp: string }[] = [];
    let cursor: { ts: string; id: string } | undefined;
    for (;;) {
      const where = cursor
        ? `where: { or: [{ timestamp_gt: "${cursor.ts}" }, { timestamp: "${cursor.ts}", id_gt: "${cursor.id}" }] }`
        : '';
      const page = (
        await query(
          sb,
          56,
          'dodoex',
          `{ swaps(first: 1000, orderBy: timestamp, orderDirection: asc, ${where}) { id timestamp } }`,
        )
      ).swaps;
      seen.push(...page);
      if (page.length < 1000) break;
      cursor = { ts: page.at(-1).timestamp, id: page.at(-1).id };
    }
    expect(seen).toHaveLength(total.length);
    expect(new Set(seen.map((r) => r.id)).size).toBe(total.length);
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1]!, seen[i]!];
      expect(BigInt(a.timestamp) < BigInt(b.timestamp) || (a.timestamp === b.timestamp && a.id < b.id)).toBe(true);
    }
  });

  it('pages event tables by id in both directions, exactly, also after new blocks, a reorg, and at an older block', async () => {
    const chainId = 43114;
    const byteOrder = (ids: string[], sign: number) =>
      [...ids].sort((a, b) => sign * Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const pageAll = async (plural: string, dir: 'asc' | 'desc', block?: number) => {
      const ids: string[] = [];
      let bound: string | undefined;
      const at = block === undefined ? '' : `block: { number: ${block} },`;
      for (;;) {
        const where = bound === undefined ? '' : `where: { id_${dir === 'asc' ? 'gt' : 'lt'}: "${bound}" }`;
        const page = (
          await query(
            sb,
            chainId,
            'dodoex',
            `{ x: ${plural}(first: 1000, orderBy: id, orderDirection: ${dir}, ${at} ${where}) { id } }`,
          )
        ).x;
        ids.push(...page.map((r: { id: string }) => r.id));
        if (page.length < 1000) return ids;
        bound = page.at(-1).id;
      }
    };
    const check = async (entity: string, plural: string, block?: number) => {
      const want = (await allRows(sb, chainId, 'dodoex', entity, block)).map((r) => r.id as string);
      expect(want.length).toBeGreaterThan(0);
      expect(await pageAll(plural, 'asc', block)).toEqual(byteOrder(want, 1));
      expect(await pageAll(plural, 'desc', block)).toEqual(byteOrder(want, -1));
    };
    const head = (await query(sb, chainId, 'dodoex', '{ _meta { block { number } } }'))._meta.block.number;
    await check('Swap', 'swaps');
    await check('MaintainerFeeTx', 'maintainerFeeTxes');
    // New events land past the index, and the reorganized ones change their ids: both must be served in place.
    await sb.control('advance', { blocks: 3000, chainId });
    await sb.control('reorg', { depth: 2000, chainId });
    await check('Swap', 'swaps');
    await check('Transaction', 'transactions');
    await check('Swap', 'swaps', head - 5000);
    // A bound that is not a lower-case id prefix: ids compare as text, so "0xFFFF" lies between "0x9…" and "0xa…".
    const upper = (
      await query(sb, chainId, 'dodoex', '{ swaps(first: 3, orderBy: id, where: { id_gt: "0xFFFF" }) { id } }')
    ).swaps;
    const above = (await allRows(sb, chainId, 'dodoex', 'Swap'))
      .map((r) => r.id as string)
      .filter((id) => Buffer.compare(Buffer.from(id), Buffer.from('0xFFFF')) > 0);
    expect(upper.map((r: { id: string }) => r.id)).toEqual(byteOrder(above, 1).slice(0, 3));
    expect(upper[0].id).toMatch(/^0xa/);
  });

  it('breaks ties by id in the same direction when descending', async () => {
    const rows = (
      await query(sb, 56, 'dodoex', '{ swaps(first: 1000, orderBy: timestamp, orderDirection: desc) { id timestamp } }')
    ).swaps;
    for (let i = 1; i < rows.length; i++) {
      const [a, b] = [rows[i - 1], rows[i]];
      expect(BigInt(a.timestamp) > BigInt(b.timestamp) || (a.timestamp === b.timestamp && a.id > b.id)).toBe(true);
    }
  });

  it('orders by a nested field', async () => {
    const rows = (
      await query(
        sb,
        1,
        'dodoex',
        '{ liquidityPositions(first: 200, orderBy: pair__updatedAt) { id pair { updatedAt } } }',
      )
    ).liquidityPositions;
    const ts = rows.map((r: any) => BigInt(r.pair.updatedAt));
    expect(ts).toEqual([...ts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });
});

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

describe('consistency of the generated data', () => {
  it('day and hour data are the sums of their swaps', async () => {
    const swaps = await allRows(sb, 42161, 'dodoex', 'Swap');
    for (const [entity, field, secs] of [
      ['PairDayData', 'date', 86400],
      ['PairHourData', 'hour', 3600],
    ] as const) {
      const buckets = await allRows(sb, 42161, 'dodoex', entity);
      expect(buckets.length).toBeGreaterThan(0);
      for (const b of buckets.filter((_, i) => i % 17 === 0)) {
        const mine = swaps.filter(
          (s) => s.pair === b.pairAddress && Math.floor(Number(s.timestamp) / secs) * secs === b[field],
        );
        const sum = (k: string) => X.format(mine.reduce<X.Dec>((a, s) => X.add(a, X.parse(s[k])), X.dec(0)));
        expect([b.volumeBase, b.volumeQuote, b.volumeUSD, b.feeBase, b.feeQuote, b.txns]).toEqual([
          sum('baseVolume'),
          sum('quoteVolume'),
          sum('volumeUSD'),
          sum('feeBase'),
          sum('feeQuote'),
          String(mine.length),
        ]);
      }
    }
  });

  it('dodoZoos counters match the rows, and swaps name pools and tokens that exist', async () => {
    const zoo = (await query(sb, 1313161554, 'dodoex', '{ dodoZoos { id pairCount tokenCount crowdpoolingCount } }'))
      .dodoZoos[0];
    const pairs = await allRows(sb, 1313161554, 'dodoex', 'Pair');
    const tokens = new Set((await allRows(sb, 1313161554, 'dodoex', 'Token')).map((t) => t.id));
    expect(zoo.id).toBe('dodoex-v2-aurora');
    expect(Number(zoo.pairCount)).toBe(pairs.filter((p) => p.type !== 'VIRTUAL').length);
    expect(Number(zoo.tokenCount)).toBe(tokens.size);
    expect(Number(zoo.crowdpoolingCount)).toBe((await allRows(sb, 1313161554, 'dodoex', 'CrowdPooling')).length);
    const pairIds = new Set(pairs.map((p) => p.id));
    for (const s of await allRows(sb, 1313161554, 'dodoex', 'Swap')) {
      expect(pairIds.has(s.pair)).toBe(true);
      expect(tokens.has(s.fromToken) && tokens.has(s.toToken)).toBe(true);
    }
  });

  it('keeps the counters of the mappings that verify reads: per day, per pool and day, per crowd pool, in all', async () => {
    // Each identity as the mapping's handlers make it hold (DODOEX/dodoex_v2_subgraph at 0eb5baca: transaction.ts
    // addTransaction, dayUpdates.ts updatePairDayData/updateUserDayData, helpers.ts createToken/createUser,
    // crowdPooling.ts handleBid, token/factory.ts handleNewERC20), counted here from every row.
    const c = 56;
    const day = (ts: string | number) => Math.floor(Number(ts) / 86400) * 86400;
    const tally = (keys: string[]) => keys.reduce((m, k) => m.set(k, (m.get(k) ?? 0) + 1), new Map<string, number>());
    const rows = (e: string, schema = 'dodoex') => allRows(sb, c, schema, e);
    const days = await rows('DodoDayData');
    const txs = tally((await rows('Transaction')).map((t) => String(day(t.timestamp))));
    const userDays = tally((await rows('UserDayData')).map((u) => String(u.date)));
    expect(days.length).toBeGreaterThan(3);
    for (const d of days) {
      expect(Number(d.txCount), `day ${d.date}`).toBe(txs.get(String(d.date)) ?? 0);
      expect(Number(d.uniqueUsersCount), `day ${d.date}`).toBe(userDays.get(String(d.date)) ?? 0);
    }
    expect(days.map((d) => String(d.date)).sort()).toEqual([...txs.keys()].sort());
    const swaps = tally((await rows('Swap')).map((s) => `${s.pair}-${day(s.timestamp)}`));
    const pairDays = await rows('PairDayData');
    expect(new Map(pairDays.map((p) => [`${p.pairAddress}-${p.date}`, Number(p.txns)]))).toEqual(swaps);
    const zoo = (await query(sb, c, 'dodoex', '{ dodoZoos { tokenCount uniqueUsersCount } }')).dodoZoos[0];
    expect(Number(zoo.tokenCount)).toBe((await rows('Token')).length);
    expect(Number(zoo.uniqueUsersCount)).toBe((await rows('User')).length);
    const positions = tally((await rows('BidPosition')).map((b) => b.cp));
    const pools = await rows('CrowdPooling');
    expect([...positions.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(pools.length);
    for (const cp of pools) expect(Number(cp.investorsCount), cp.id).toBe(positions.get(cp.id) ?? 0);
    const dodoToken = (await query(sb, c, 'token', '{ dodoTokens { tokens } }')).dodoTokens[0];
    expect(Number(dodoToken.tokens)).toBe((await rows('Token', 'token')).length);
  });

  it('leaves rows out of answers silently when asked: pages stay full, and every row left out is listed', async () => {
    const c = 128;
    const all = (await allRows(sb, c, 'dodoex', 'Swap')).map((s) => s.id).sort();
    await post(sb, '/_sandbox/dropped', {});
    const set = await post(sb, '/_sandbox/faults', { silentDrop: 0.05, silentDropEntities: ['Swap'] });
    expect(set.body).toMatchObject({ silentDrop: 0.05, silentDropEntities: ['Swap'] });
    try {
      const served: string[] = [];
      const sizes: number[] = [];
      for (let after = ''; ; ) {
        const page = (
          await query(
            sb,
            c,
            'dodoex',
            'query ($id: ID!) { swaps(first: 100, orderBy: id, where: { id_gt: $id }) { id } }',
            {
              id: after,
            },
          )
        ).swaps as { id: string }[];
        sizes.push(page.length);
        served.push(...page.map((s) => s.id));
        // Another entity is never touched.
        expect((await query(sb, c, 'dodoex', '{ tokens(first: 5) { id } }')).tokens).toHaveLength(5);
        if (page.length < 100) break;
        after = page.at(-1)!.id;
      }
      const dropped = (await (await fetch(`${sb.url}/_sandbox/dropped`)).json()) as {
        dropped: { chainId: number; entity: string; row: { id: string } }[];
      };
      const left = dropped.dropped.map((d) => d.row.id);
      expect(dropped.dropped.every((d) => d.chainId === c && d.entity === 'Swap')).toBe(true);
      // About 5% left out, each once, none of them served; what was served and what was left out make every row.
      expect(left.length).toBeGreaterThan(all.length * 0.02);
      expect(left.length).toBeLessThan(all.length * 0.1);
      expect(new Set(left).size).toBe(left.length);
      expect(served.filter((id) => left.includes(id))).toEqual([]);
      expect([...served, ...left].sort()).toEqual(all);
      // Every page but the last is full.
      expect(sizes.slice(0, -1).every((n) => n === 100)).toBe(true);
    } finally {
      await post(sb, '/_sandbox/faults', { silentDrop: 0, silentDropEntities: [] });
    }
    const bad = await post(sb, '/_sandbox/faults', { silentDrop: 2 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('silentDrop must be a number from 0 to 1, but is "2"');
  });

  it('holds the hostile values the exporter must survive', async () => {
    const tokens = await allRows(sb, 1, 'dodoex', 'Token');
    expect(tokens.some((t) => t.symbol.includes("'") && t.symbol.includes('DROP TABLE'))).toBe(true);
    expect(tokens.some((t) => /\p{Extended_Pictographic}/u.test(t.symbol))).toBe(true);
    expect(tokens.some((t) => X.compare(X.parse(t.usdPrice), X.parse('1e-17')) < 0)).toBe(true);
    const pairs = await allRows(sb, 1, 'dodoex', 'Pair');
    expect(pairs.some((p) => X.compare(X.parse(p.baseReserve), X.parse('1e30')) >= 0)).toBe(true);
    const digits = (v: string) => v.replace(/[-.]/g, '').replace(/^0+/, '').length;
    expect(
      [...pairs.map((p) => p.lastTradePrice), ...tokens.map((t) => t.usdPrice)].some((v: string) => digits(v) === 34),
    ).toBe(true);
  });
});

describe('the liquidity list', () => {
  const listPath = () => `/graphql?opname=FetchLiquidityList&apikey=${sb.apiKey}`;

  it('answers the documented request body, consistent with the subgraph', async () => {
    const a = await post(sb, listPath(), LIQUIDITY_LIST_BODY);
    expect(a.status).toBe(200);
    const info = a.body.data!.liquidity_list;
    expect(info.__typename).toBe('LiquidityListInfo');
    expect([info.currentPage, info.pageSize]).toEqual([1, 8]);
    expect(info.lqList).toHaveLength(8);
    const pairs = new Map((await allRows(sb, 56, 'dodoex', 'Pair')).map((p) => [p.id, p]));
    const expectedCount = [...pairs.values()].filter((p) => ['CLASSICAL', 'DVM', 'DSP'].includes(p.type)).length;
    expect(info.totalCount).toBe(expectedCount);
    for (const item of info.lqList) {
      expect(item.__typename).toBe('LiquidityLqList');
      expect(item.pair.__typename).toBe('LiquidityPair');
      expect(item.pair.baseToken.__typename).toBe('LiquidityToken');
      expect(item.pair.apy.__typename).toBe('LiquidityApyData');
      expect(item.isMyLiquidity).toBeNull();
      const row = pairs.get(item.id)!;
      expect([item.pair.baseReserve, item.pair.quoteReserve, item.pair.chainId]).toEqual([
        row.baseReserve,
        row.quoteReserve,
        56,
      ]);
      const tvl = X.add(
        X.mul(X.parse(row.baseReserve), X.parse(item.pair.baseToken.usdPrice)),
        X.mul(X.parse(row.quoteReserve), X.parse(item.pair.quoteToken.usdPrice)),
      );
      expect(item.pair.tvl).toBe(X.format(tvl));
    }
  });

  it('pages exactly: every pool once across pages, totalCount exact', async () => {
    const ids: string[] = [];
    let total = 0;
    for (let page = 1; ; page++) {
      const body = {
        ...LIQUIDITY_LIST_BODY,
        variables: { where: { chainIds: [1, 137], currentPage: page, pageSize: 7 } },
      };
      const info = (await post(sb, listPath(), body)).body.data!.liquidity_list;
      total = info.totalCount;
      ids.push(...info.lqList.map((i: { id: string }) => i.id));
      if (page * 7 >= total) break;
    }
    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);
  });

  it('follows user: isMyLiquidity and viewOnlyOwn', async () => {
    const pos = (await allRows(sb, 56, 'dodoex', 'LiquidityPosition'))[0]!;
    const where = { chainIds: [56], currentPage: 1, pageSize: 100, user: pos.user, filterState: { viewOnlyOwn: true } };
    const info = (await post(sb, listPath(), { ...LIQUIDITY_LIST_BODY, variables: { where } })).body.data!
      .liquidity_list;
    expect(info.lqList.map((i: { id: string }) => i.id)).toContain(pos.pair);
    expect(info.lqList.every((i: { isMyLiquidity: boolean }) => i.isMyLiquidity === true)).toBe(true);
  });
});

describe('the documented query shapes', () => {
  it.each(Object.entries(SEED_QUERIES))('%s returns data', async (_purpose, q) => {
    const pair = (await query(sb, 1, 'dodoex', '{ pairs(first: 1, where: { type_not: "VIRTUAL" }) { id } }')).pairs[0]
      .id;
    const user = (await query(sb, 1, 'dodoex', '{ swaps(first: 1) { from } }')).swaps[0].from;
    const data = await query(
      sb,
      1,
      'dodoex',
      q.replace('$PAIR', pair).replace('$USER', user).replace('$SINCE', '1766000000'),
    );
    const value = Object.values(data)[0];
    expect(Array.isArray(value) ? value.length : value ? 1 : 0).toBeGreaterThan(0);
  });
});

describe('auth, routes and the gateway', () => {
  it('answers a missing or unknown key with 401 and the service texts', async () => {
    const q = { query: '{ swaps { id } }' };
    const none = await post(sb, '/subgraph/graphql?chainId=1&schemaName=dodoex', q);
    expect([none.status, none.body.message]).toEqual([401, 'Missing API key in request']);
    const bad = await post(sb, '/subgraph/graphql?chainId=1&schemaName=dodoex&apikey=nope', q);
    expect([bad.status, bad.body.message]).toEqual([401, 'Invalid API key in request']);
    const list = await post(sb, '/graphql?opname=FetchLiquidityList', LIQUIDITY_LIST_BODY);
    expect(list.status).toBe(401);
  });

  it('accepts the schema spellings exchange and mine', async () => {
    expect((await query(sb, 1, 'exchange', '{ dodoZoos { id } }')).dodoZoos[0].id).toBe('dodoex-v2');
    expect(await query(sb, 1, 'mine', '{ minePools(first: 1) { id } }')).toHaveProperty('minePools');
  });

  it('serves the gateway route with its key rules and error texts', async () => {
    const info = await sb.control<{ subgraphs: { chainId: number; schema: string; subgraphId: string }[] }>('info');
    const id = info.subgraphs.find((s) => s.chainId === 56 && s.schema === 'dodoex')!.subgraphId;
    const q = { query: '{ dodoZoos { id } }' };
    const msg = async (key: string, sid = id) =>
      (await post(sb, `/api/${key}/subgraphs/id/${sid}`, q)).body.errors?.[0]?.message;
    expect(await msg('abc')).toBe('auth error: malformed API key');
    expect(await msg('0'.repeat(32))).toBe('auth error: API key not found');
    expect(await msg(sb.apiKey, 'NoSuchSubgraph')).toBe('subgraph not found: NoSuchSubgraph');
    const ok = await post(sb, `/api/${sb.apiKey}/subgraphs/id/${id}`, q);
    expect(ok.body.data!.dodoZoos[0].id).toBe('dodoex-v2-bsc');
    const range = await post(sb, `/api/${sb.apiKey}/subgraphs/id/${id}`, { query: '{ swaps(first: 5000) { id } }' });
    expect(range.body.errors![0]!.message).toMatch(
      /^bad indexers: \{0x[0-9a-f]{40}: BadResponse\(unattestable response: The `first` argument must be between 0 and 1000, but is 5000\)\}$/,
    );
  });

  it('supports introspection, so a GraphQL client can read the schema', async () => {
    const client = new GraphQLClient(`${sb.url}${subgraphPath(sb, 1, 'token')}`);
    const r = await client.request<{ __schema: { types: { name: string }[] } }>(gql`{ __schema { types { name } } }`);
    const names = r.__schema.types.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['Token', 'Token_filter', 'Token_orderBy', '_Meta_', 'Block_height']));
    const tokens = await client.request<{ tokens: { id: string; symbol: string }[] }>(
      gql`query T($n: Int!) { tokens(first: $n) { id symbol } }`,
      { n: 2 },
    );
    expect(tokens.tokens).toHaveLength(2);
  });
});

describe('faults, rate limits and counters', () => {
  it('limits the rate with 429 and Retry-After, injects faults on request, and counts what it served', async () => {
    await sb.control('stats', {});
    await sb.control('faults', { rateLimit: 5 });
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 12; i++) {
      const a = await post(
        sb,
        subgraphPath(sb, 1, 'dodoex'),
        { query: '{ _meta { block { number } } }' },
        { 'user-agent': 'dodo-dev42' },
      );
      statuses.push(a.status);
      if (a.status === 429) retryAfter = a.headers.get('retry-after');
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    await sb.control('faults', { rateLimit: 0, faults: 'http500=1' });
    const res = await fetch(`${sb.url}${subgraphPath(sb, 1, 'dodoex')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":"{ _meta { deployment } }"}',
    });
    expect(res.status).toBe(500);
    await sb.control('faults', { faults: 'indexing=1' });
    const idx = await post(sb, subgraphPath(sb, 1, 'dodoex'), {
      query: '{ swaps(first: 1) { id } _meta { hasIndexingErrors } }',
    });
    expect(idx.body.errors![0]!.message).toBe('indexing_error');
    expect(idx.body.data).toEqual({ _meta: { hasIndexingErrors: true } });
    await sb.control('faults', { faults: '' });
    const stats = await sb.control<{
      requests: number;
      rateLimited: number;
      userAgents: Record<string, number>;
      faults: Record<string, number>;
    }>('stats');
    expect(stats.requests).toBe(14);
    expect(stats.userAgents['dodo-dev42']).toBe(12);
    expect(stats.faults).toEqual({ http500: 1, indexing: 1 });
  });
});
