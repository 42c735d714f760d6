/**
 * Conformance of the sandbox with graph-node and the service, against the sandbox started as a real process: every
 * entity of each schema on each chain, `updatedAt`, first and skip, ordering and keyset paging. Filters and blocks,
 * the generated data and the list, and the service's routes and faults are in sandbox-conformance-*.int.test.ts.
 */

import { describe, expect, it } from 'vitest';
import { loadSchemaModel } from '../../src/schemas/entity-model.ts';
import {
  CHAINS,
  checkEncoding,
  plural,
  SCHEMAS,
  sb,
  scalarSelection,
  useConformanceSandbox,
} from '../support/conformance-sandbox.ts';
import { allRows, query, queryError } from '../support/sandbox-client.ts';

useConformanceSandbox();

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
