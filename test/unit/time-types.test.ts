/**
 * Times as an analyst expects them: a subgraph's `Int` or `BigInt` of seconds (or milliseconds) made a TIMESTAMP WITH
 * TIME ZONE by `--type Entity.field=TIMESTAMPTZ` (`TIMESTAMPTZ(ms)`), exact against the sandbox's numbers, in the
 * warehouse and the lake; a type given later casts the column in place, reading nothing again; an event's own
 * `timestamp`, by which its rows are paged, stays a number (the lake's `time` is its time), refused in one line.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';
import { allRows } from '../support/sandbox-client.ts';

/** Fields a mapping fills with block times, by their names (the sandbox does too). */
const SCHEMA = `
type Pool @entity { id: ID! createdAtTimestamp: BigInt! openedAt: Int! closedAtMs: BigInt updatedAt: BigInt! }
type Swap @entity(immutable: true) { id: ID! timestamp: BigInt! pool: Pool! }
`;

let sb: SandboxProcess;
let dir: string;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-times-'));
  writeFileSync(join(dir, 'times.graphql'), SCHEMA);
  sb = await startSandbox(['--scale', '2000', '--chains', '1', '--subgraph', `times=${join(dir, 'times.graphql')}`]);
  url = /^subgraph times: (\S+)$/m.exec(sb.banner)![1]!;
});
afterAll(async () => {
  await sb?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('times of an Int or a BigInt', () => {
  it('are times in the warehouse and the lake, exact, by --type; one given later is cast in place', async () => {
    const data = join(dir, 'a');
    const env = { ...sandboxEnv(sb, data), POOL_EXPORT_API_KEY: '' };
    const types = [
      'Pool.createdAtTimestamp=TIMESTAMPTZ',
      'Pool.openedAt=TIMESTAMPTZ(s)',
      'Pool.closedAtMs=TIMESTAMPTZ(ms)',
    ];
    const added = await cli(
      ['subgraph', 'add', 'times', '--chain', 'ethereum', '--url', url, ...types.flatMap((t) => ['--type', t])],
      env,
    );
    expect(added.code, added.stderr).toBe(0);
    expect((await cli(['run'], env)).code).toBe(0);
    loadConfig({ env });
    const names = DATASETS.filter((d) => d.schema === 'times').map((d) => d.name);
    expect((await compareWithSandbox(sb, data, [1], names)).mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
    // Every time is the instant its number counts, checked here by Date (an oracle apart from DuckDB's).
    const block = async () => {
      const w = await Warehouse.open(data, { readOnly: true });
      try {
        return Number(
          (await w.all("SELECT block FROM _pool_export.checkpoints WHERE dataset = 'times.pools'"))[0]!.block,
        );
      } finally {
        await w.close();
      }
    };
    const upstream = await allRows(sb, 1, 'times', 'Pool', await block());
    const stored = async (column: string) => {
      const w = await Warehouse.open(data, { readOnly: true });
      try {
        const rows = await w.all(
          `SELECT id, CAST(epoch_ms(${column}) AS VARCHAR) AS ms, typeof(${column}) AS t FROM times.pools`,
        );
        return new Map(rows.map((r) => [String(r.id), { ms: r.ms === null ? null : Number(r.ms), t: String(r.t) }]));
      } finally {
        await w.close();
      }
    };
    for (const [field, column, perMs] of [
      ['createdAtTimestamp', 'created_at_timestamp', 1000],
      ['openedAt', 'opened_at', 1000],
      ['closedAtMs', 'closed_at_ms', 1],
    ] as const) {
      const mine = await stored(column);
      for (const r of upstream) {
        const v = r[field];
        const at = mine.get(String(r.id))!;
        expect(at.t, column).toBe('TIMESTAMP WITH TIME ZONE');
        expect(at.ms, `${field} of ${String(r.id)}`).toBe(v === null ? null : new Date(Number(v) * perMs).getTime());
      }
    }
    // A type given later: the column is cast in place by the next run, which reads nothing again.
    const refreshed = await cli(
      ['subgraph', 'refresh', 'times', '--type', 'Pool.updatedAt=TIMESTAMPTZ', ...types.flatMap((t) => ['--type', t])],
      env,
    );
    expect(refreshed.code, refreshed.stderr).toBe(0);
    const next = await cli(['run', '--log-format', 'json'], env);
    expect(next.code).toBe(0);
    expect(next.stderr).toMatch(/"event":"task-unchanged","dataset":"times\.pools"/);
    expect((await stored('updated_at')).values().next().value!.t).toBe('TIMESTAMP WITH TIME ZONE');
    loadConfig({ env });
    expect((await compareWithSandbox(sb, data, [1], names)).mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
  });

  it("refuses an event's own timestamp, by which its rows are paged, in one line naming the lake's time", async () => {
    const data = join(dir, 'b');
    const r = await cli(
      ['subgraph', 'add', 'times', '--chain', 'ethereum', '--url', url, '--type', 'Swap.timestamp=TIMESTAMPTZ'],
      sandboxEnv(sb, data),
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      'pool-export: subgraph times: types["Swap.timestamp"]: Swap.timestamp orders Swap\'s rows as they are read, so it stays a number; the lake\'s views hold it as a time in the column time',
    );
  });
});
