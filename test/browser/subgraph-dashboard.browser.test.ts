/**
 * The dashboard of a data folder that holds only a subgraph (its schema from the sandbox's IPFS route, no DODO key),
 * opened in headless Chromium: only the subgraph's parts are drawn, no DODO chart; no console error and no request but
 * the file; each dataset's rows in the table equal the sandbox's own rows at the block the data were read at; the
 * swaps' line in the chart equals the sandbox's swaps counted per UTC day here; one row of freshness per deployment.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { chromiumPath, openPage } from '../support/chromium.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { allRows } from '../support/sandbox-client.ts';

const CHROMIUM = chromiumPath();
const FIXTURE = fileURLToPath(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url));
const SHOTS = join(process.cwd(), 'reports', 'browser');
const CHAINS: [number, string][] = [
  [1, 'ethereum'],
  [56, 'bsc'],
];
let sb: SandboxProcess;
let dir: string;
let env: Record<string, string>;
let browser: Browser;

/** A second subgraph whose names are long, as real ones' are: its tables must fit the page all the same. */
const LONG_NAMES = `type ${'Rebalancing'.repeat(3)}StrategyPositionSnapshot @entity { id: ID! value: BigInt! }
type ${'Liquidation'.repeat(3)}AuctionSettlementEvent @entity(immutable: true) { id: ID! timestamp: BigInt! amount: BigInt! }`;

beforeAll(async () => {
  if (!CHROMIUM) return;
  dir = mkdtempSync(join(tmpdir(), 'pool-export-browser-sg-'));
  writeFileSync(join(dir, 'long.graphql'), LONG_NAMES);
  sb = await startSandbox([
    ...['--scale', '600', '--chains', '1,56', '--subgraph', `pools=${FIXTURE}`],
    ...['--subgraph', `long_named_subgraph_of_a_protocol=${join(dir, 'long.graphql')}`],
  ]);
  const urls = [...sb.banner.matchAll(/^subgraph pools: (\S+)$/gm)].map((m) => m[1]!);
  const longUrls = [...sb.banner.matchAll(/^subgraph long_named_subgraph_of_a_protocol: (\S+)$/gm)].map((m) => m[1]!);
  env = { ...sandboxEnv(sb, join(dir, 'data')), POOL_EXPORT_API_KEY: '' };
  const added = await cli(
    ['subgraph', 'add', 'own', '--chain', 'ethereum', '--url', urls[0]!, '--chain', 'bsc', '--url', urls[1]!],
    env,
  );
  if (added.code !== 0) throw new Error(added.stdout + added.stderr);
  const long = ['subgraph', 'add', 'long_named_subgraph_of_a_protocol'];
  const addedLong = await cli(
    [...long, '--chain', 'ethereum', '--url', longUrls[0]!, '--chain', 'bsc', '--url', longUrls[1]!],
    env,
  );
  if (addedLong.code !== 0) throw new Error(addedLong.stdout + addedLong.stderr);
  // The schema came from the deployment's own files: no line about introspection.
  if (added.stderr.includes('introspection')) throw new Error(added.stderr);
  const run = await cli(['run'], env);
  if (run.code !== 0) throw new Error(run.stdout + run.stderr);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await sb?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The block each dataset's committed rows were read at, per chain, as `status --json` says. */
async function blocks(): Promise<Map<string, number>> {
  const status = await cli(['status', '--json'], env);
  if (status.code !== 0) throw new Error(status.stderr);
  const entries = JSON.parse(status.stdout).datasets as { dataset: string; chainId: number; block: number }[];
  return new Map(entries.map((e) => [`${e.dataset}/${e.chainId}`, e.block]));
}

describe.skipIf(!CHROMIUM)("the dashboard of a subgraph's folder in Chromium", () => {
  it("draws the subgraph's rows per dataset and per day, and its deployments' freshness, no DODO chart", async () => {
    const file = join(dir, 'subgraph.html');
    const made = await cli(['dashboard', '--out', file], env);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^dashboard: .*subgraph\.html \(\d+ KiB; open it in a browser, no network needed\)\n$/);
    const { page, errors, requests } = await openPage(browser, file);
    try {
      expect(errors).toEqual([]);
      expect(requests).toEqual([`file://${file}`]);
      const parts = await page
        .locator('section[data-part]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-part')));
      expect(parts).toEqual(['subgraph-activity', 'subgraph-datasets', 'deployments']);
      // Every table fits a window of 1,280 pixels: nothing runs past its section, nor the page past the window.
      const overflows = await page.evaluate(() => {
        const doc = (globalThis as any).document;
        const sections = [...doc.querySelectorAll('section')] as any[];
        return [
          ...sections.filter((s) => s.scrollWidth > s.clientWidth + 1).map((s) => s.getAttribute('data-part')),
          ...(doc.documentElement.scrollWidth > (globalThis as any).innerWidth ? ['the page'] : []),
        ];
      });
      expect(overflows).toEqual([]);
      expect(await page.locator('#chart-activity svg path').count()).toBeGreaterThan(5);

      // Each dataset's rows: the sandbox's rows at the block read, summed over the chains.
      const at = await blocks();
      const rows = page.locator('table.subgraph-datasets tbody tr');
      const shown = new Map(
        (
          await rows.evaluateAll((trs) =>
            trs.map((tr) => [
              tr.getAttribute('data-dataset'),
              Number(tr.querySelector('td.n')!.getAttribute('data-value')),
            ]),
          )
        ).map(([d, n]) => [String(d), Number(n)]),
      );
      const entities: [string, string, string?][] = [
        ['own.swaps', 'Swap'],
        ['own.pools', 'Pool'],
        ['own.accounts', 'Account'],
        ['own.token_price_stats_hour', 'TokenPriceStat', 'hour'],
      ];
      for (const [dataset, entity, interval] of entities) {
        let n = 0;
        for (const [chainId] of CHAINS)
          n += (await allRows(sb, chainId, 'pools', entity, at.get(`${dataset}/${chainId}`), interval)).length;
        expect(shown.get(dataset), dataset).toBe(n);
      }

      // The swaps' line: the sandbox's swaps per UTC day, counted here from their timestamps.
      const perDay = new Map<string, number>();
      for (const [chainId] of CHAINS)
        for (const s of await allRows(sb, chainId, 'pools', 'Swap', at.get(`own.swaps/${chainId}`))) {
          const day = new Date(Number(s.timestamp) * 1000).toISOString().slice(0, 10);
          perDay.set(day, (perDay.get(day) ?? 0) + 1);
        }
      const chart = await page.evaluate(() => {
        const o = (globalThis as any).poolExportCharts['chart-activity'].getOption();
        return {
          days: o.xAxis[0].data as string[],
          series: o.series.map((s: any) => ({ name: s.name, data: s.data })),
        };
      });
      const swaps = chart.series.find((s: { name: string }) => s.name === 'own.swaps')!.data as number[];
      const drawn = new Map(chart.days.map((d, i) => [d, swaps[i]!] as const).filter(([, n]) => n > 0));
      expect(drawn).toEqual(perDay);

      // One row per deployment, its lag measured.
      const deployments = page.locator('table.deployments tbody tr');
      expect(await deployments.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-deployment')))).toEqual([
        'long_named_subgraph_of_a_protocol/1',
        'long_named_subgraph_of_a_protocol/56',
        'own/1',
        'own/56',
      ]);
      for (const lag of await deployments
        .locator('td[data-lag]')
        .evaluateAll((tds) => tds.map((td) => td.getAttribute('data-lag'))))
        expect(Number(lag)).toBeGreaterThanOrEqual(0);
      await page.screenshot({ path: join(SHOTS, 'subgraph-dashboard.png'), fullPage: true });
    } finally {
      await page.close();
    }
  });
});
