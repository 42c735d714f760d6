/**
 * The sandbox serves a subgraph of any schema (`--subgraph NAME=FILE`) as graph-node would: a real sandbox process,
 * asked over HTTP at the URL it prints, its answers checked against its own rows (`/_sandbox/rows`) by rules computed
 * here: keyset pages in the id's own order (numeric for a timeseries' Int8 ids), references that resolve, graph-node's
 * wire text for every scalar at its extremes, `_change_block` after new blocks, and rows rewritten by a reorganisation;
 * bad `--subgraph` input refused. Aggregations are in sandbox-any-subgraph-aggregations.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../../src/sandbox/spawn.ts';
import {
  FIXTURE,
  gql,
  head,
  MODEL,
  plural,
  type Row,
  rows,
  sb,
  urls,
  useAnySubgraphSandbox,
} from '../support/any-subgraph-sandbox.ts';

useAnySubgraphSandbox();

describe('a subgraph of any schema in the sandbox', () => {
  it('prints one graph-node URL per chain, each serving its own chain', async () => {
    expect(urls).toEqual([`${sb.url}/subgraphs/name/pools/ethereum`, `${sb.url}/subgraphs/name/pools/bsc`]);
    const [eth, bsc] = await Promise.all(urls.map(head));
    const info = await sb.control<{ chains: { chainId: number; head: number }[] }>('info');
    expect([eth, bsc]).toEqual([1, 56].map((id) => info.chains.find((c) => c.chainId === id)!.head));
  });

  it('pages every entity out whole with an id keyset pinned to one block, Int8 ids in numeric order', async () => {
    const url = urls[0]!;
    const at = await head(url);
    for (const e of MODEL.entities) {
      const ids: string[] = [];
      const numeric = e.field.get('id')!.type === 'Int8';
      for (;;) {
        const last = ids.at(-1);
        const page = await gql<Record<string, { id: string }[]>>(
          url,
          `query($at: Int!, $where: ${e.name}_filter) { items: ${plural(e.name)}(first: 9, orderBy: id, block: {number: $at}, where: $where) { id } }`,
          { at, where: last === undefined ? {} : { id_gt: last } },
        );
        ids.push(...page.items!.map((r) => r.id));
        if (page.items!.length < 9) break;
      }
      // The oracle's order: numbers for Int8 ids, byte order (ASCII hex here) for the others.
      const expected = (await rows(e.name, '1', at)).map((r) => r.id);
      expected.sort((a, b) => (numeric ? Number(BigInt(a) - BigInt(b)) : a < b ? -1 : a > b ? 1 : 0));
      expect(ids, e.name).toEqual(expected);
      expect(new Set(ids).size, e.name).toBe(ids.length);
      expect(ids.length, e.name).toBeGreaterThanOrEqual(20);
    }
    // Past 9 the byte order of Int8 ids is not their numeric order: paging crossed it.
    expect((await rows('PriceTick', '1')).length).toBeGreaterThan(100);
  });

  it('resolves every reference at the head, and prints each scalar as graph-node does, extremes included', async () => {
    const all = new Map<string, Row[]>();
    for (const e of MODEL.entities) all.set(e.name, await rows(e.name, '56'));
    const seen = new Map<string, Set<string>>();
    const note = (type: string, v: string) => {
      if (!seen.has(type)) seen.set(type, new Set());
      seen.get(type)!.add(v);
    };
    const int = (s: string) => BigInt(s);
    for (const e of MODEL.entities) {
      for (const r of all.get(e.name)!) {
        for (const f of e.fields) {
          if (f.derivedFrom) {
            expect(r, `${e.name}.${f.name} is not stored`).not.toHaveProperty(f.name);
            continue;
          }
          const v = r[f.name];
          if (v === null) {
            expect(f.nonNull, `${e.name}.${f.name} null`).toBe(false);
            continue;
          }
          for (const x of f.list ? (v as unknown[]) : [v]) {
            const where = `${e.name}.${f.name} = ${JSON.stringify(x).slice(0, 80)}`;
            if (f.ref) {
              // A field of an interface's type names a row of one of the entities that implement it.
              const targets = MODEL.interfaces?.get(f.type)?.implementers ?? [f.type];
              expect(
                targets.some((t) => all.get(t)!.some((row) => row.id === x)),
                `${where} resolves`,
              ).toBe(true);
              if (targets.length > 1)
                note(`${e.name}.${f.name}`, targets.find((t) => all.get(t)!.some((row) => row.id === x))!);
            } else if (f.enum) {
              expect(MODEL.enums!.get(f.type), where).toContain(x);
            } else if (f.type === 'Int') {
              expect(Number.isInteger(x) && (x as number) >= -(2 ** 31) && (x as number) < 2 ** 31, where).toBe(true);
              note('Int', String(x));
            } else if (['Int8', 'BigInt', 'Timestamp'].includes(f.type)) {
              expect(x, where).toMatch(/^-?(0|[1-9]\d*)$/);
              // Int8 and Timestamp are 64-bit in graph-node's store; a BigInt is any size.
              if (f.type !== 'BigInt')
                expect(int(x as string) >= -(2n ** 63n) && int(x as string) < 2n ** 63n, where).toBe(true);
              note(f.type, String(x));
            } else if (f.type === 'BigDecimal') {
              // Normalized plain text: no exponent, no trailing zero after a point, at most 34 significant digits.
              expect(x, where).toMatch(/^-?(0|[1-9]\d*)(\.\d*[1-9])?$|^-?0\.\d*[1-9]$/);
              expect(
                (x as string).replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '').length,
              ).toBeLessThanOrEqual(34);
              note('BigDecimal', String(x));
            } else if (f.type === 'Bytes') {
              expect(x, where).toMatch(/^0x([0-9a-f]{2})*$/);
              note('Bytes', String(x));
            } else if (f.type === 'Boolean') {
              expect(typeof x, where).toBe('boolean');
            } else {
              expect(typeof x, where).toBe('string');
              note('String', String(x));
            }
          }
        }
      }
    }
    const has = (type: string, v: string) => seen.get(type)?.has(v) ?? false;
    expect(has('Int', '-2147483648') && has('Int', '2147483647')).toBe(true);
    expect(has('Int8', String(-(2n ** 63n))) && has('Int8', String(2n ** 63n - 1n))).toBe(true);
    expect(has('BigInt', String(2n ** 256n - 1n)) && has('BigInt', String(-(2n ** 255n)))).toBe(true);
    expect(has('Bytes', '0x')).toBe(true);
    const decimals = [...seen.get('BigDecimal')!];
    expect(decimals.some((d) => d.startsWith('-'))).toBe(true);
    expect(decimals.some((d) => d.replace(/[-.]/g, '').replace(/^0+/, '').length >= 30)).toBe(true);
    expect(decimals.some((d) => d.startsWith('0.0000000000'))).toBe(true);
    const strings = [...seen.get('String')!];
    expect(strings.some((s) => s.includes('<script>'))).toBe(true);
    expect(strings.some((s) => s.includes('\u001b['))).toBe(true);
    expect(strings.some((s) => s.length > 4000)).toBe(true);
    // Fields of the interface's type name rows of both its implementers.
    for (const f of ['Pool.lastEvent', 'Pool.recentEvents'])
      expect([...(seen.get(f) ?? [])].sort()).toEqual(['Mint', 'Swap']);
    // Timestamps are microseconds of the chain's own times (2025-2026 here), not seconds.
    for (const t of seen.get('Timestamp')!) expect(int(t) / 1_000_000n).toBeGreaterThan(1_700_000_000n);
  });

  it("answers a field of an interface's type, and the interface's own collection, as the row's own entity", async () => {
    const url = urls[0]!;
    const at = await head(url);
    const [pools, swaps, mints] = await Promise.all(['Pool', 'Swap', 'Mint'].map((e) => rows(e, '1', at)));
    const own = new Map<string, { type: string; row: Row }>([
      ...swaps!.map((r) => [r.id, { type: 'Swap', row: r }] as const),
      ...mints!.map((r) => [r.id, { type: 'Mint', row: r }] as const),
    ]);
    const got = await gql<{ pools: { id: string; lastEvent: Record<string, unknown> | null }[] }>(
      url,
      `{ pools(first: 1000, block: { number: ${at} }) { id lastEvent { __typename id timestamp ... on Swap { amountIn } ... on Mint { amountUSD } } } }`,
    );
    expect(got.pools).toHaveLength(pools!.length);
    const byId = new Map(pools!.map((p) => [p.id, p]));
    const types = new Set<string>();
    for (const p of got.pools) {
      const named = byId.get(p.id)!.lastEvent as string | null;
      if (named === null) {
        expect(p.lastEvent).toBeNull();
        continue;
      }
      const o = own.get(named)!;
      types.add(o.type);
      const specific = o.type === 'Swap' ? { amountIn: o.row.amountIn } : { amountUSD: o.row.amountUSD };
      expect(p.lastEvent).toEqual({ __typename: o.type, id: named, timestamp: o.row.timestamp, ...specific });
    }
    expect([...types].sort()).toEqual(['Mint', 'Swap']);
    // The interface's root collection: every row of both, newest first.
    const events = await gql<{ events: { __typename: string; id: string; timestamp: string }[] }>(
      url,
      `{ events(first: 1000, orderBy: timestamp, orderDirection: desc, block: { number: ${at} }) { __typename id timestamp } }`,
    );
    expect(events.events.map((e) => e.id).sort()).toEqual([...own.keys()].sort());
    for (const e of events.events) expect(e.__typename).toBe(own.get(e.id)!.type);
    const times = events.events.map((e) => BigInt(e.timestamp));
    expect(times.every((t, i) => i === 0 || times[i - 1]! >= t)).toBe(true);
  });

  it('gives the versions written since a block through _change_block, and rewrites the rows of reorganised blocks', async () => {
    const url = urls[1]!;
    const before = await head(url);
    await sb.control('advance', { blocks: 400, chainId: 56 });
    const now = await head(url);
    expect(now).toBe(before + 400);
    // The oracle: the rows at the head that are new since block - 1 or differ from their state there; a row that
    // did not change must be the same, byte for byte, at both blocks.
    const since = async (block: number) => {
      let total = 0;
      for (const e of MODEL.entities) {
        const changed = await gql<Record<string, { id: string }[]>>(
          url,
          `query($at: Int!) { items: ${plural(e.name)}(first: 1000, block: {number: $at}, where: {_change_block: {number_gte: ${block}}}) { id } }`,
          { at: now },
        );
        const then = new Map((await rows(e.name, '56', block - 1)).map((r) => [r.id, JSON.stringify(r)]));
        const oracle: string[] = [];
        for (const r of await rows(e.name, '56', now)) {
          const was = then.get(r.id);
          if (was !== JSON.stringify(r)) oracle.push(r.id);
        }
        expect(changed.items!.map((r) => r.id).sort(), e.name).toEqual(oracle.sort());
        total += oracle.length;
      }
      return total;
    };
    expect(await since(before + 1)).toBeGreaterThan(0);
    // A reorganisation of the last 20,000 blocks (about 17 hours of this chain): the swaps of the blocks it rewrote
    // have new ids, those before it are as they were, and every version it wrote is newer than its first block.
    const swapsBefore = await rows('Swap', '56', now);
    const { reorged } = await sb.control<{ reorged: { chainId: number; fromBlock: number }[] }>('reorg', {
      depth: 20_000,
      chainId: 56,
    });
    const from = reorged[0]!.fromBlock;
    const after = await rows('Swap', '56', now);
    const kept = (rs: Row[]) => rs.filter((r) => r.__block < from).map((r) => r.id);
    expect(kept(after)).toEqual(kept(swapsBefore));
    const rewritten = swapsBefore.filter((r) => r.__block >= from);
    expect(rewritten.length).toBeGreaterThan(0);
    const afterIds = new Set(after.map((r) => r.id));
    for (const r of rewritten) expect(afterIds.has(r.id)).toBe(false);
    expect(after.length).toBe(swapsBefore.length);
    expect(await since(from)).toBeGreaterThan(rewritten.length);
  });
});

describe('bad --subgraph input', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pe-subgraph-'));
  const file = (name: string, sdl: string) => {
    const p = join(dir, name);
    writeFileSync(p, sdl);
    return p;
  };
  it.each([
    ['a missing file', () => `x=${join(dir, 'missing.graphql')}`, /cannot read the schema file .*missing\.graphql/],
    ['no file', () => 'x', /--subgraph takes NAME=FILE/],
    ['a name that is not one', () => `Bad/Name=${FIXTURE}`, /--subgraph name "Bad\/Name" must start with a lowercase/],
    ["DODO's own name", () => `dodoex=${FIXTURE}`, /--subgraph name "dodoex" is taken/],
    [
      'an unknown scalar',
      () => file('money.graphql', 'type Pool @entity { id: ID! price: Money! }'),
      /field Pool\.price of x has type Money, which is neither a scalar of graph-node/,
    ],
    [
      'SDL that does not parse',
      () => file('broken.graphql', 'type Pool @entity {'),
      /does not parse at line 1, column 20: Syntax Error/,
    ],
    [
      'an aggregation over an entity that is not a timeseries',
      () =>
        file(
          'agg.graphql',
          'type D @entity(immutable: true) { id: Int8! timestamp: Timestamp! v: BigInt! }\ntype S @aggregation(intervals: ["hour"], source: "D") { id: Int8! timestamp: Timestamp! s: BigInt! @aggregate(fn: "sum", arg: "v") }',
        ),
      /cannot be served: aggregation S: its source D is not a timeseries of the schema/,
    ],
    [
      'an aggregate over an expression',
      () =>
        file(
          'expr.graphql',
          'type D @entity(timeseries: true) { id: Int8! timestamp: Timestamp! v: BigInt! }\ntype S @aggregation(intervals: ["hour"], source: "D") { id: Int8! timestamp: Timestamp! s: BigInt! @aggregate(fn: "sum", arg: "v * 2") }',
        ),
      /cannot be served: aggregation S\.s: arg "v \* 2" is not a field of D \(expressions are not served\)/,
    ],
  ])('refuses %s in one line with exit code 2', (_, spec, message) => {
    const arg = spec();
    const value = arg.includes('=') || !arg.endsWith('.graphql') ? arg : `x=${arg}`;
    // Bounded: a sandbox that serves what it should refuse would otherwise hold the test until the tier's end.
    const r = spawnSync(process.execPath, [BIN, 'sandbox', '--port', '0', '--subgraph', value], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines.filter((l) => l.length > 0).length, r.stderr).toBeLessThanOrEqual(2);
    expect(r.stderr).toMatch(message);
  });
});
