/**
 * A dataset of every shape an entity page holds (text, a BigInt, a BigDecimal, a raw amount, an Int, a reference, a
 * list of references, a list of strings), and rows of it, for tests of checking, keeping and storing pages.
 */
import type { Dataset } from '../../src/catalog/catalog.ts';

/** The probes dataset, as `<schema>.probes` (its table is the same name). */
export function probeDataset(schema = 'dodoex'): Dataset {
  return {
    name: `${schema}.probes`,
    schema: 'dodoex',
    entity: 'Probe',
    kind: 'event',
    seq: 'timestamp',
    table: `${schema}.probes`,
    columns: [
      { field: 'id', column: 'id', cls: 'text', nullable: false, select: 'id' },
      { field: 'timestamp', column: 'timestamp', cls: 'bigint', nullable: false, select: 'timestamp' },
      { field: 'amount', column: 'amount', cls: 'decimal', nullable: true, select: 'amount' },
      { field: 'raw', column: 'raw', cls: 'raw', nullable: true, select: 'raw' },
      { field: 'n', column: 'n', cls: 'int', nullable: true, select: 'n' },
      { field: 'pair', column: 'pair_id', cls: 'ref', nullable: true, select: 'pair { id }' },
      { field: 'tokens', column: 'tokens', cls: 'list', nullable: true, select: 'tokens { id }' },
      { field: 'tags', column: 'tags', cls: 'list', nullable: true, select: 'tags' },
    ],
  };
}

/** Three probes as the upstream sends them: every field set, every nullable one null, and hostile text. */
export const PROBE_ROWS = [
  {
    id: 'a',
    timestamp: '100',
    amount: '1479583.1069',
    raw: '1000000000000000000000000',
    n: 7,
    pair: { id: '0xp' },
    tokens: [{ id: 't1' }, null],
    tags: ['x', null],
  },
  { id: 'b', timestamp: '101', amount: null, raw: null, n: null, pair: null, tokens: null, tags: null },
  // Markup, a quote, a NUL, a right-to-left override, a backslash and non-ASCII.
  {
    id: '<b>"é\u0000\u202e\\',
    timestamp: '102',
    amount: '-0.5',
    raw: '0',
    n: -1,
    pair: { id: 'q' },
    tokens: [],
    tags: [],
  },
];
