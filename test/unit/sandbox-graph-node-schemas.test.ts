/**
 * The sandbox serves what graph-node deploys and refuses at start what it cannot (graph-node f27eb5f): an enum that
 * repeats a value (graph-node keeps an enum's values as a set, `EnumMap`), an interface no entity implements, root
 * fields of one name (`Stat`'s plural and `Stats`' single row: the first answers); two types of one table are refused.
 * An unknown path is not found (404). A real sandbox process, asked over HTTP.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';

const SCHEMA = `
interface Lonely { id: ID! name: String! }
enum Side { BUY SELL BUY }
type Trade @entity(immutable: true) { id: ID! side: Side! lonely: Lonely others: [Lonely!]! timestamp: BigInt! }
type Stat @entity { id: ID! n: BigInt! }
type Stats @entity { id: ID! m: BigInt! }
`;

let sb: SandboxProcess;
let dir: string;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-sandbox-gn-'));
  writeFileSync(join(dir, 'gn.graphql'), SCHEMA);
  sb = await startSandbox(['--scale', '2000', '--chains', '1', '--subgraph', `gn=${join(dir, 'gn.graphql')}`]);
  url = /^subgraph gn: (\S+)$/m.exec(sb.banner)![1]!;
});
afterAll(async () => {
  await sb?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function gql(query: string): Promise<{ data?: Record<string, unknown>; errors?: { message: string }[] }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { data?: Record<string, unknown>; errors?: { message: string }[] };
}

describe('the sandbox, as graph-node deploys a schema', () => {
  it('serves an enum that repeats a value, once each', async () => {
    const a = await gql('{ __type(name: "Side") { enumValues { name } } trades(first: 50) { side } }');
    expect(a.errors).toBeUndefined();
    expect((a.data!.__type as { enumValues: { name: string }[] }).enumValues.map((v) => v.name)).toEqual([
      'BUY',
      'SELL',
    ]);
    const sides = new Set((a.data!.trades as { side: string }[]).map((t) => t.side));
    expect([...sides].every((s) => s === 'BUY' || s === 'SELL')).toBe(true);
  });

  it('serves an interface no entity implements: a field of its type is null, a list of them empty', async () => {
    const a = await gql('{ trades(first: 20) { id lonely { id } others { id } } lonelies { id } }');
    expect(a.errors).toBeUndefined();
    const trades = a.data!.trades as { lonely: unknown; others: unknown[] }[];
    expect(trades.length).toBe(20);
    expect(trades.every((t) => t.lonely === null && t.others.length === 0)).toBe(true);
    expect(a.data!.lonelies).toEqual([]);
  });

  it("answers a root field of two types' names with the first: Stat's collection, and Stats' as stats_collection", async () => {
    const a = await gql(
      '{ __schema { queryType { fields { name type { kind ofType { kind ofType { name } } } } } } stats(first: 1) { n } stats_collection(first: 1) { m } }',
    );
    expect(a.errors).toBeUndefined();
    const fields = (a.data!.__schema as { queryType: { fields: { name: string }[] } }).queryType.fields;
    expect(fields.filter((f) => f.name === 'stats')).toHaveLength(1);
    expect(a.data!.stats).toEqual([{ n: expect.any(String) }]);
    expect(a.data!.stats_collection).toEqual([{ m: expect.any(String) }]);
  });

  it("serves its deployment's manifest as graph deploy publishes one: a data source's address is 20 bytes of hex", async () => {
    const meta = (await gql('{ _meta { deployment } }')).data!._meta as { deployment: string };
    const res = await fetch(`${sb.url}/ipfs/api/v0/cat?arg=${meta.deployment}`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^ {6}address: "0x[0-9a-f]{40}"$/m);
  });

  it('answers an unknown path 404', async () => {
    for (const path of ['/ipfx/api/v0/cat?arg=QmX', '/nope', '/subgraphs/name'])
      expect((await fetch(`${sb.url}${path}`, { method: 'POST' })).status, path).toBe(404);
  });

  it('refuses at start, in one line with exit code 2, a schema graph-node cannot lay out', () => {
    const file = join(dir, 'ttl.graphql');
    writeFileSync(file, 'type NewTTL @entity { id: ID! } type NewTtl @entity { id: ID! }');
    const r = spawnSync(process.execPath, [BIN, 'sandbox', '--port', '0', '--subgraph', `ttl=${file}`], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(
      `pool-export: --subgraph ttl (${file}) cannot be served: type NewTTL and type NewTtl are both graph-node's table new_ttl: graph-node cannot deploy the schema`,
    );
  });
});
