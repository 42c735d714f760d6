/**
 * What a plain run of a data folder takes (src/pipeline/sources.ts): DODO's jobs where DODO belongs, and a job per
 * subgraph added; a folder of subgraphs alone never meets DODO. And a subgraph's value of the wrong type names the
 * command that fixes a subgraph, not DODO's `schema check`. Real data folders in a temporary folder.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import type { Job } from '../../src/catalog/job.ts';
import { loadConfig } from '../../src/config/config.ts';
import { writeFolderSubgraphs } from '../../src/config/subgraph-config.ts';
import { mapPage } from '../../src/export/mapper.ts';
import { folderSources } from '../../src/pipeline/sources.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'pe-sources-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Two of DODO's jobs, as `jobs/` declares such. */
const DODO: Job[] = [
  { name: 'events', schedule: '*/5 * * * *', description: 'events', datasets: ['dodoex.swaps'] },
  { name: 'liquidity', schedule: '*/15 * * * *', description: 'list', datasets: ['list.liquidity'] },
];

/** A data folder with the test schema's subgraph added (or none), read with or without a DODO key. */
function folder(name: string, opts: { subgraph: boolean; key?: string }) {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  if (opts.subgraph)
    writeFolderSubgraphs(dir, [
      {
        name: 'pools',
        deployments: [{ chainId: 1, url: 'http://127.0.0.1:1/subgraphs/name/pools' }],
        schema: readFileSync(FIXTURE, 'utf8'),
      },
    ]);
  const config = () => loadConfig({ env: { POOL_EXPORT_DATA_DIR: dir, POOL_EXPORT_API_KEY: opts.key ?? '' } });
  return { dir, config };
}

const names = (jobs: readonly Job[]) => jobs.map((j) => j.name);

describe('the sources of a data folder', () => {
  it('a folder with no subgraph added is DODO’s, with or without a key', () => {
    const s = folderSources(folder('plain', { subgraph: false }).config(), DODO);
    expect(s).toMatchObject({ dodo: true, why: 'no subgraph is added to this folder' });
    expect(names(s.jobs)).toEqual(['events', 'liquidity']);
  });

  it('a folder of subgraphs alone, with no key and no DODO data, takes its subgraphs and nothing of DODO', () => {
    const s = folderSources(folder('alone', { subgraph: true }).config(), DODO);
    expect(s).toMatchObject({ dodo: false, why: 'no DODO API key is set, and this folder holds no DODO data' });
    expect(names(s.jobs)).toEqual(['pools']);
  });

  it('a DODO key, or DODO data already in the lake, keeps DODO’s jobs beside the subgraphs', () => {
    const keyed = folderSources(folder('keyed', { subgraph: true, key: 'k'.repeat(32) }).config(), DODO);
    expect(keyed).toMatchObject({ dodo: true, why: 'a DODO API key is set' });
    expect(names(keyed.jobs)).toEqual(['events', 'liquidity', 'pools']);
    // A DODO folder whose cron job lost its key: its swaps are in the lake, so a run still asks for the key.
    const f = folder('held', { subgraph: true });
    mkdirSync(join(f.dir, 'lake', 'dodoex', 'swaps', 'chain=56'), { recursive: true });
    const held = folderSources(f.config(), DODO);
    expect(held).toMatchObject({ dodo: true, why: "this folder holds DODO's data" });
    expect(names(held.jobs)).toEqual(['events', 'liquidity', 'pools']);
  });

  it("a subgraph's value of the wrong type names `subgraph refresh NAME`; DODO's names `schema check`", () => {
    folder('hint', { subgraph: true }).config();
    const pools = findDataset('pools.factories')!;
    expect(() =>
      mapPage(pools, 1, [{ id: 'a', owner: '0x01', poolCount: 7, totalValueLockedUSD: '1', paused: false }]),
    ).toThrow(/field "poolCount": .*The subgraph's schema may have changed: run `pool-export subgraph refresh pools`$/);
    const swaps = findDataset('dodoex.swaps')!;
    expect(() => mapPage(swaps, 56, [{ id: 'a', amountIn: 7 }])).toThrow(/run `pool-export schema check`$/);
  });
});
