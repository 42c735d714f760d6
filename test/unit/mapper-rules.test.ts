/**
 * The mapper's rules one by one, on a dataset made for the purpose (a column of every class, nested paths, a struct
 * list): each accepted value with the row expected of it, each refused one with the whole message, written out here.
 */
import { describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/catalog/catalog.ts';
import type { Column } from '../../src/catalog/column.ts';
import { mapPage } from '../../src/export/mapper.ts';
import { PROBE_ROWS, probeDataset } from '../support/probes.ts';

const col = (select: string, cls: Column['cls'], more: Partial<Column> = {}): Column => ({
  field: select.split('.').at(-1)!,
  column: select.replace(/\./g, '_'),
  cls,
  nullable: false,
  select,
  ...more,
});

const probe: Dataset = {
  name: 'list.probe',
  schema: 'list',
  entity: 'Probe',
  kind: 'list',
  table: 'list.probe',
  columns: [
    col('id', 'text'),
    col('n', 'int'),
    col('b', 'bool'),
    col('big', 'bigint'),
    col('c8', 'int8'),
    col('amt', 'raw'),
    col('dec', 'decimal'),
    col('tags', 'list', { nullable: true }),
    col('pos', 'structs', { nullable: true, struct: { a: 'text', f: 'bool', inner: { x: 'text' } } }),
    col('owner.id', 'ref', { column: 'owner_id' }),
    col('pair.name', 'text', { nullable: true, parents: [true] }),
    col('pair.token.sym', 'text', { parents: [true, false] }),
    col('deep.x', 'text', { nullable: true }),
  ],
};

const good = () => ({
  id: 'p1',
  n: 7,
  b: false,
  big: '-12',
  c8: '9223372036854775807',
  amt: '1000000000000000000000',
  dec: '0.000000000000000001',
  tags: ['a', 'b', null, ''],
  pos: [{ a: 'x', f: true, extra: 'dropped', inner: { x: 'y', also: 1 } }, null, { a: null, f: null, inner: null }],
  owner: { id: 'o1' },
  pair: { name: 'n', token: { sym: 's' } },
  deep: { x: 'dx' },
});

const row = (over: Record<string, unknown>) => mapPage(probe, 56, [{ ...good(), ...over }]).rows[0]!;
const fails = (over: Record<string, unknown>) => {
  try {
    mapPage(probe, 56, [{ ...good(), ...over }]);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('the row was accepted');
};
const at = (field: string, detail: string) =>
  `upstream sent invalid data for list.probe on bsc (chain 56), field "${field}": ${detail}. The upstream schema may have changed: run \`pool-export schema check\``;
const range = (field: string, detail: string) =>
  `upstream sent invalid data for list.probe on bsc (chain 56), field "${field}": ${detail}. No real value comes near it, so the task stops here, storing nothing of this page, until the upstream corrects it`;

describe('mapping a row', () => {
  it('keeps every value, flattens references and paths, and reduces structs to their declared fields in order', () => {
    const r = row({});
    expect(r).toEqual({
      id: 'p1',
      n: 7,
      b: false,
      big: '-12',
      c8: '9223372036854775807',
      amt: '1000000000000000000000',
      dec: '0.000000000000000001',
      tags: ['a', 'b', null, ''],
      pos: [{ a: 'x', f: true, inner: { x: 'y' } }, null, { a: null, f: null, inner: null }],
      owner_id: 'o1',
      pair_name: 'n',
      pair_token_sym: 's',
      deep_x: 'dx',
    });
    expect(Object.keys((r.pos as object[])[0]!)).toEqual(['a', 'f', 'inner']);
  });

  it('maps every row of a page, in order', () => {
    const rows = mapPage(probe, 1, [good(), { ...good(), id: 'p2' }, { ...good(), id: 'p3' }]).rows;
    expect(rows.map((r) => r.id)).toEqual(['p1', 'p2', 'p3']);
  });

  it('gives null under a null object that may be null, and refuses one that may not', () => {
    expect(row({ pair: null })).toMatchObject({ pair_name: null, pair_token_sym: null });
    expect(fails({ pair: { name: 'n', token: null } })).toBe(
      at('pair.token.sym', 'expected a value (the schema says non-null), got null'),
    );
    // No parents declared: a null on the path is a null value, allowed here.
    expect(row({ deep: null }).deep_x).toBeNull();
    expect(fails({ deep: 'text' })).toBe(at('deep.x', 'the field is missing from the answer'));
    expect(fails({ deep: {} })).toBe(at('deep.x', 'the field is missing from the answer'));
  });

  it('refuses a row that is not an object', () => {
    const row = (v: unknown) => () => mapPage(probe, 56, [good(), v]);
    expect(row(5)).toThrow(at('row', 'expected an object, got 5'));
    expect(row(null)).toThrow(at('row', 'expected an object, got null'));
    expect(row('x')).toThrow(at('row', 'expected an object, got "x"'));
  });
});

describe('refusing a value of the wrong type', () => {
  it.each<[string, unknown, string, string?]>([
    ['id', 5, 'expected a string, got 5'],
    ['n', 1.5, 'expected an integer, got 1.5'],
    ['n', '1', 'expected an integer, got "1"'],
    ['b', 'true', 'expected a boolean, got "true"'],
    ['b', 0, 'expected a boolean, got 0'],
    ['b', { a: 1 }, 'expected a boolean, got {"a":1}'],
    ['big', 12, 'expected a BigInt as a decimal string, got 12'],
    ['big', '1.0', 'expected a BigInt as a decimal string, got "1.0"'],
    ['big', ' 1', 'expected a BigInt as a decimal string, got " 1"'],
    ['amt', '1e5', 'expected a BigInt as a decimal string, got "1e5"'],
    ['amt', 100, 'expected a BigInt as a decimal string, got 100'],
    ['dec', 5, 'expected a BigDecimal as a decimal string, got 5'],
    ['dec', '1.', 'expected a BigDecimal as a decimal string, got "1."'],
    ['dec', '.5', 'expected a BigDecimal as a decimal string, got ".5"'],
    ['tags', 'x', 'expected a list, got "x"'],
    ['tags', [1], 'expected a list of strings, got [1]'],
    ['tags', [{ id: 'a' }], 'expected a list of strings, got [{"id":"a"}]'],
    ['pos', {}, 'expected a list of objects, got {}'],
    ['pos', [5], 'expected an object at pos[0], got 5'],
    ['pos', [null, []], 'expected an object at pos[1], got []'],
    ['pos', [{ a: 'x', f: true }], 'pos[0].inner is missing from the answer'],
    ['pos', [{ a: 1, f: true, inner: null }], 'expected a string at pos[0].a, got 1'],
    ['pos', [{ a: 'x', f: 'yes', inner: null }], 'expected a boolean at pos[0].f, got "yes"'],
    ['pos', [{ a: 'x', f: true, inner: { x: 2 } }], 'expected a string at pos[0].inner.x, got 2'],
    ['pos', [{ a: 'x', f: true, inner: 'z' }], 'expected an object at pos[0].inner, got "z"'],
    ['owner', 'o1', 'expected an entity reference { id }, got "o1"', 'owner.id'],
    ['owner', { id: 5 }, 'expected an entity reference { id }, got {"id":5}', 'owner.id'],
    ['owner', {}, 'expected an entity reference { id }, got {}', 'owner.id'],
  ])('%s = %j: %s', (field, value, detail, name = field) => {
    expect(fails({ [field]: value })).toBe(at(name, detail));
  });

  it('says a missing field is missing, and a null where the schema says non-null', () => {
    const { n: _, ...missing } = good();
    expect(() => mapPage(probe, 56, [missing])).toThrow(at('n', 'the field is missing from the answer'));
    expect(fails({ id: null })).toBe(at('id', 'expected a value (the schema says non-null), got null'));
    expect(row({ tags: null, pos: null })).toMatchObject({ tags: null, pos: null });
  });

  it('shows a long value cut to 80 characters with its length, a short one whole', () => {
    expect(fails({ b: 'y'.repeat(78) })).toBe(at('b', `expected a boolean, got "${'y'.repeat(78)}"`));
    expect(fails({ b: 'y'.repeat(79) })).toBe(at('b', `expected a boolean, got "${'y'.repeat(79)}… (81 characters)`));
    expect(fails({ b: 'y'.repeat(1_000_000) })).toBe(
      at('b', `expected a boolean, got "${'y'.repeat(79)}… (1,000,002 characters)`),
    );
  });
});

describe('refusing a number out of its column range', () => {
  it.each<[string, string, boolean]>([
    ['c8', '9223372036854775807', true],
    ['c8', '9223372036854775808', false],
    ['c8', '-9223372036854775808', true],
    ['c8', '-9223372036854775809', false],
    ['c8', '-999999999999999999', true],
    ['c8', '0000000000000000000000001', true],
    ['big', '-99999999999999999999', false],
    ['amt', '9'.repeat(308), true],
    ['amt', `17976931348623157${'0'.repeat(292)}`, true],
    ['amt', `18${'0'.repeat(307)}`, false],
    ['dec', `${'9'.repeat(308)}.999`, true],
    ['dec', `18${'0'.repeat(307)}.5`, false],
    ['dec', `-18${'0'.repeat(307)}`, false],
  ])('%s = %s fits: %s', (field, value, fits) => {
    if (fits) {
      expect(row({ [field]: value })[field]).toBe(value);
      return;
    }
    const what = {
      c8: 'a count, time or block number within 64 bits',
      big: 'a count, time or block number within 64 bits',
      amt: 'an amount within DOUBLE range (below 1.8e308)',
      dec: 'a BigDecimal within DOUBLE range (below 1.8e308)',
    }[field];
    const text = JSON.stringify(value);
    const shown =
      text.length <= 80 ? text : `${text.slice(0, 80)}… (${text.length.toLocaleString('en-US')} characters)`;
    expect(fails({ [field]: value })).toBe(range(field, `expected ${what}, got ${shown}`));
  });
});

describe('a list of entity references', () => {
  // An entity's list field that selects `{ id }` (Transaction.tokens): each element is a reference, or null.
  const txs = probeDataset();
  const tokens = (v: unknown) => mapPage(txs, 56, [{ ...PROBE_ROWS[1], tokens: v }]).rows[0]!.tokens;
  const refused = (v: unknown) =>
    `upstream sent invalid data for dodoex.probes on bsc (chain 56), field "tokens": expected a list of entity references { id }, got ${JSON.stringify(v)}. The upstream schema may have changed: run \`pool-export schema check\``;

  it('keeps each reference\u2019s id, and nulls', () => {
    expect(tokens([{ id: 'a' }, null, { id: 'c', more: 1 }])).toEqual(['a', null, 'c']);
    expect(tokens([])).toEqual([]);
    expect(tokens(null)).toBeNull();
  });

  it.each<[unknown]>([[['a']], [[{ id: 7 }]], [[[]]], [[{}]]])('refuses %j', (v) => {
    expect(() => tokens(v)).toThrow(refused(v));
  });
});
