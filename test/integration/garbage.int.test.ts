/**
 * Upstream garbage: wrong types, missing fields, an HTML page, indexing errors, a field removed from the schema.
 * Each stops the task with an error naming dataset, chain and field, and leaves what is stored as it was;
 * `pool-export schema check` prints the drift.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox } from '../support/export-check.ts';

const DATASETS = ['dodoex.swaps', 'dodoex.tokens', 'dodoex.pairs'];
let sb: SandboxProcess;
let dir: string;
let baseline: string;
const run = (data: string) =>
  cli(
    ['run', '--chains', 'bsc', '--datasets', DATASETS.join(','), '--config', join(dir, 'config.json')],
    sandboxEnv(sb, data),
  );

/** What is stored: rows and checkpoint per dataset. */
async function stored(data: string): Promise<Record<string, { rows: number; cursor: string }>> {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    const out: Record<string, { rows: number; cursor: string }> = {};
    for (const r of await w.all(
      "SELECT dataset, cursor FROM _pool_export.checkpoints WHERE dataset IN ('dodoex.swaps', 'dodoex.tokens', 'dodoex.pairs') ORDER BY dataset",
    )) {
      const table = String(r.dataset);
      out[table] = {
        cursor: String(r.cursor),
        rows: Number((await w.all(`SELECT count(*) AS n FROM ${table}`))[0]!.n),
      };
    }
    return out;
  } finally {
    await w.close();
  }
}

beforeAll(async () => {
  sb = await startSandbox(['--scale', '1500', '--chains', '56']);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-garbage-'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ pageSize: 200, batchRows: 200, maxAttempts: 2 }));
  baseline = join(dir, 'baseline');
  const r = await run(baseline);
  if (r.code !== 0) throw new Error(r.stdout + r.stderr);
  // New rows upstream, so that every case below has something to read.
  await sb.control('advance', { blocks: 300 });
});
afterAll(async () => {
  await sb?.control('garbage', {}).catch(() => undefined);
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const CASES = [
  {
    name: 'a BigDecimal sent as a JSON number',
    garbage: { mode: 'wrong-type', entity: 'Swap', field: 'amountIn' },
    failed: ['dodoex.swaps'],
    error:
      /FAILED dodoex\.swaps on bsc: upstream sent invalid data for dodoex\.swaps on bsc \(chain 56\), field "amountIn": expected a BigDecimal as a decimal string, got 12\.5\. The upstream schema may have changed: run `pool-export schema check`/,
  },
  {
    name: 'a String sent as a number',
    garbage: { mode: 'wrong-type', entity: 'Token', field: 'symbol' },
    failed: ['dodoex.tokens'],
    error:
      /FAILED dodoex\.tokens on bsc: upstream sent invalid data for dodoex\.tokens on bsc \(chain 56\), field "symbol": expected a string, got 12\.5/,
  },
  {
    name: 'a field missing from every row',
    garbage: { mode: 'missing-field', entity: 'Pair', field: 'baseReserve' },
    failed: ['dodoex.pairs'],
    error:
      /FAILED dodoex\.pairs on bsc: upstream sent invalid data for dodoex\.pairs on bsc \(chain 56\), field "baseReserve": the field is missing from the answer/,
  },
  {
    name: 'a field removed from the schema',
    garbage: { mode: 'remove-field', entity: 'Swap', field: 'amountIn' },
    failed: ['dodoex.swaps'],
    error:
      /FAILED dodoex\.swaps on bsc: upstream answered with GraphQL errors: Type `Swap` has no field `amountIn`\. The upstream schema no longer matches the catalog: run `pool-export schema check` to see the drift/,
  },
  {
    name: 'an HTML error page instead of JSON',
    garbage: { mode: 'html' },
    failed: DATASETS,
    error:
      /FAILED 3 tasks \(dodoex\.pairs, dodoex\.swaps, dodoex\.tokens on bsc\): the block lookup failed: answered with an HTML page \("502 Bad Gateway"\) instead of JSON from http:\/\/127\.0\.0\.1:\d+\/subgraph\/graphql\?chainId=56&schemaName=dodoex&apikey=\*\*\* \(gave up after 2 attempts\)/,
  },
  {
    name: 'hasIndexingErrors: true',
    garbage: { mode: 'indexing-errors' },
    failed: DATASETS,
    error:
      /FAILED 3 tasks \(dodoex\.pairs, dodoex\.swaps, dodoex\.tokens on bsc\): the block lookup failed: the dodoex subgraph of bsc reports indexing errors, so its data may be incomplete; these datasets are skipped until it recovers/,
  },
] as const;

describe('upstream garbage', () => {
  it.each(CASES)(
    '$name: the task stops with a named error, stored data stays as it was, a clean re-run is exact',
    async (c) => {
      const data = join(dir, c.garbage.mode + ('field' in c.garbage ? `-${c.garbage.field}` : ''));
      cpSync(baseline, data, { recursive: true });
      const before = await stored(data);
      await sb.control('garbage', c.garbage);
      const r = await run(data);
      await sb.control('garbage', {});
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toMatch(c.error);
      expect(r.stdout + r.stderr).not.toContain(sb.apiKey);
      const after = await stored(data);
      // The failed datasets kept their rows and checkpoints; the others moved on.
      for (const ds of DATASETS) {
        if ((c.failed as readonly string[]).includes(ds)) expect(after[ds], ds).toEqual(before[ds]);
        else expect(after[ds]!.rows, ds).toBeGreaterThanOrEqual(before[ds]!.rows);
      }
      // One line per distinct failure: the tasks that failed alike share one.
      expect(r.stdout.match(/^FAILED /gm)?.length).toBe(1);
      const again = await run(data);
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect((await compareWithSandbox(sb, data, [56], DATASETS)).mismatches).toEqual([]);
    },
    120_000,
  );

  it('schema check: every schema matches the catalog, then a removed field is reported as breaking with exit 1', async () => {
    const env = sandboxEnv(sb, join(dir, 'schema'));
    const ok = await cli(['schema', 'check', '--chains', 'bsc'], env);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout.match(/^\w+ on bsc: .*$/gm)).toEqual([
      'dodoex on bsc: matches the catalog',
      'token on bsc: matches the catalog',
      'mine on bsc: matches the catalog',
    ]);
    // Wrapped to the terminal's width (COLUMNS when it is not one): the root fields once made a line of 962 characters.
    const narrow = await cli(['schema', 'check', '--chains', 'bsc'], { ...env, COLUMNS: '80' });
    const lines = narrow.stdout.split('\n');
    expect(lines.filter((l) => [...l].length > 80)).toEqual([]);
    expect(lines.join(' ').replace(/\s+/g, ' ')).toContain('root fields: ');
    expect(narrow.stdout.replace(/\s+/g, ' ')).toBe(ok.stdout.replace(/\s+/g, ' '));
    await sb.control('garbage', { mode: 'remove-field', entity: 'Pair', field: 'baseReserve' });
    const drift = await cli(['schema', 'check', '--chains', 'bsc', '--format', 'json'], env);
    await sb.control('garbage', {});
    expect(drift.code).toBe(1);
    const report = JSON.parse(drift.stdout) as {
      breaking: number;
      endpoints: { schema: string; drift: { severity: string; what: string }[] }[];
    };
    expect(report.breaking).toBe(1);
    expect(report.endpoints.find((e) => e.schema === 'dodoex')!.drift).toEqual([
      { severity: 'breaking', what: 'field Pair.baseReserve (BigDecimal!) is gone' },
    ]);
  }, 60_000);
});
