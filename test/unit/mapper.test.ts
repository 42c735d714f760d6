import { describe, expect, it } from 'vitest';
import { DATASETS, findDataset } from '../../src/catalog/catalog.ts';
import { GarbageError } from '../../src/errors.ts';
import { mapPage } from '../../src/export/mapper.ts';

const swaps = findDataset('dodoex.swaps')!;
const good = {
  id: '0xab-1',
  hash: '0xab',
  timestamp: '1700000000',
  pair: { id: '0xp' },
  sender: '0x01',
  from: '0x02',
  to: '0x03',
  fromToken: { id: '0xt1' },
  toToken: { id: '0xt2' },
  logIndex: '1',
  amountIn: '1.5',
  amountOut: '123456789012345678901.25',
  feeBase: '0.0000000000000000001',
  feeQuote: '0',
  baseVolume: '1',
  quoteVolume: '2',
  volumeUSD: '3',
  updatedAt: null,
};

describe('page mapper', () => {
  it('flattens references and keeps exact texts', () => {
    const { rows } = mapPage(swaps, 56, [good]);
    expect(rows[0]).toMatchObject({
      id: '0xab-1',
      pair_id: '0xp',
      from_token_id: '0xt1',
      amount_out: '123456789012345678901.25',
      fee_base: '0.0000000000000000001',
      updated_at: null,
    });
  });

  it.each([
    ['timestamp', '9223372036854775807', true],
    ['timestamp', '9223372036854775808', false],
    ['timestamp', '-9223372036854775808', true],
    ['amountIn', `${'9'.repeat(308)}.5`, true],
    ['amountIn', `1${'0'.repeat(308)}`, true],
    ['amountIn', `2${'0'.repeat(308)}`, false],
    ['amountIn', '9'.repeat(10_000), false],
  ])('%s = %s fits its column: %s (never a NULL number; a value that cannot fit is refused)', (field, value, fits) => {
    const run = () => mapPage(swaps, 56, [{ ...good, [field]: value }]);
    if (fits) expect(run().rows[0]![field === 'timestamp' ? 'timestamp' : 'amount_in']).toBe(value);
    else
      expect(run).toThrow(
        new RegExp(
          `field "${field}": expected (a count, time or block number within 64 bits|a BigDecimal within DOUBLE range)`,
        ),
      );
  });

  it('refuses a raw amount beyond DOUBLE range, and keeps one within it', () => {
    const tokens = findDataset('dodoex.tokens')!;
    const token = Object.fromEntries(
      tokens.columns.map((c) => [
        c.field,
        c.cls === 'text' ? 't' : c.cls === 'decimal' || c.cls === 'raw' || c.cls === 'bigint' ? '1' : null,
      ]),
    );
    expect(tokens.columns.find((c) => c.field === 'totalSupply')!.cls).toBe('raw');
    expect(mapPage(tokens, 1, [{ ...token, totalSupply: (10n ** 77n).toString() }]).rows[0]!.total_supply).toBe(
      (10n ** 77n).toString(),
    );
    expect(() => mapPage(tokens, 1, [{ ...token, totalSupply: '1'.repeat(400) }])).toThrow(
      /field "totalSupply": expected an amount within DOUBLE range/,
    );
  });

  it.each([
    ['amountIn', 1.5, 'a BigDecimal as a decimal string'],
    ['amountIn', '1e5', 'a BigDecimal as a decimal string'],
    ['timestamp', '17.5', 'a BigInt as a decimal string'],
    ['hash', null, 'a value (the schema says non-null)'],
    ['pair', 'not-an-object', 'an entity reference { id }'],
  ])('rejects %s = %j naming the dataset, chain and field', (field, value, what) => {
    const bad = { ...good, [field]: value };
    expect(() => mapPage(swaps, 56, [bad])).toThrow(GarbageError);
    expect(() => mapPage(swaps, 56, [bad])).toThrow(
      new RegExp(`dodoex\\.swaps on bsc \\(chain 56\\), field "${field}": expected ${what.replace(/[(){}]/g, '\\$&')}`),
    );
  });

  it('rejects a missing field as schema drift', () => {
    const { volumeUSD: _, ...missing } = good;
    expect(() => mapPage(swaps, 1, [missing])).toThrow(
      /field "volumeUSD": the field is missing from the answer.*schema check/,
    );
  });

  /** A list item with every field the dataset reads set to a value of its class. */
  function fullItem(): Record<string, any> {
    const item: Record<string, any> = {};
    const sample = {
      text: 'x',
      ref: 'x',
      int: 56,
      int8: '1',
      timestamp: '1',
      bool: true,
      bigint: '10',
      raw: '10',
      integer: '10',
      decimal: '1.5',
      list: ['0xm'],
      structs: [],
    } as const;
    for (const c of findDataset('list.liquidity')!.columns) {
      const keys = c.select.split('.');
      let node = item;
      for (const k of keys.slice(0, -1)) node = node[k] ??= {};
      node[keys.at(-1)!] = sample[c.cls];
    }
    return item;
  }

  it('maps liquidity-list items from nested paths', () => {
    const list = findDataset('list.liquidity')!;
    const item = fullItem();
    item.id = '0xpool';
    item.pair.baseLpToken = null;
    item.pair.quoteLpToken.id = '0xq';
    item.pair.baseToken.symbol = "a'b";
    item.pair.apy.transactionBaseApy = '0.1';
    item.pair.volume24H = null;
    const row = mapPage(list, 56, [item]).rows[0]!;
    expect(row).toMatchObject({
      id: '0xpool',
      base_lp_token_id: null,
      base_lp_token_symbol: null,
      quote_lp_token_id: '0xq',
      base_token_symbol: "a'b",
      transaction_base_apy: '0.1',
      volume_24h: null,
      mining_address: ['0xm'],
    });
  });

  it('stores an item whose pair is null (the real types allow it) with null pair columns, and refuses a null where the type says non-null', () => {
    const list = findDataset('list.liquidity')!;
    const row = mapPage(list, 56, [{ ...fullItem(), id: '0xp', pair: null }]).rows[0]!;
    expect(row).toMatchObject({ id: '0xp', type: null, base_reserve: null, base_token_id: null });
    const bad = fullItem();
    bad.pair.baseToken = null;
    expect(() => mapPage(list, 56, [bad])).toThrow(
      /list\.liquidity on bsc \(chain 56\), field "pair\.baseToken\.id": expected a value/,
    );
    const bad2 = fullItem();
    bad2.pair.baseReserve = null;
    expect(() => mapPage(list, 56, [bad2])).toThrow(/field "pair\.baseReserve": expected a value/);
  });

  it('every dataset has an id column first, and every keyset field is a column', () => {
    for (const d of DATASETS) {
      expect(d.columns[0]!.field, d.name).toBe('id');
      if (d.seq)
        expect(
          d.columns.some((c) => c.field === d.seq),
          d.name,
        ).toBe(true);
    }
  });
});
