/**
 * The dashboard opened in headless Chromium (playwright-core driving the machine's own binary). The lake is written
 * by real runs of the CLI against a sandbox process whose token names are hostile (markup, script, escapes), so the
 * page must show them inert. Checked: no console error, no dialog, no request but the file itself; every chart drawn
 * with marks; the numbers of one pool and one day equal the reports' (`pool-export report … --format json`, summed
 * here); a screenshot saved to reports/browser/.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usd } from '../../src/reports/dashboard-page.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { chromiumPath, openPage } from '../support/chromium.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';

const CHROMIUM = chromiumPath();
const SHOTS = join(process.cwd(), 'reports', 'browser');
let sb: SandboxProcess;
let dir: string;
let env: Record<string, string>;
let browser: Browser;

beforeAll(async () => {
  if (!CHROMIUM) return;
  sb = await startSandbox(['--scale', '400', '--chains', '56,137', '--history-days', '12']);
  await sb.control('garbage', { mode: 'hostile', case: 'names' });
  dir = mkdtempSync(join(tmpdir(), 'pool-export-browser-'));
  env = sandboxEnv(sb, join(dir, 'data'));
  const run = await cli(['run', '--chains', 'bsc,polygon'], env);
  if (run.code !== 0) throw new Error(run.stdout + run.stderr);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await sb?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A report's rows, as the CLI prints them exactly. */
async function report(args: string[]): Promise<Record<string, unknown>[]> {
  const r = await cli([...args, '--format', 'json'], env);
  if (r.code !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as Record<string, unknown>[];
}

describe.skipIf(!CHROMIUM)('the dashboard in Chromium', () => {
  it('renders every chart with marks, makes no request and no error, and shows hostile names as text', async () => {
    const file = join(dir, 'dashboard.html');
    const made = await cli(['dashboard', '--out', file], env);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toContain(`dashboard: ${file}`);
    const { page, errors, requests, dialogs } = await openPage(browser, file);
    try {
      expect(errors).toEqual([]);
      expect(dialogs).toEqual([]);
      expect(requests).toEqual([`file://${file}`]);
      for (const part of ['tvl', 'volume', 'top-pools', 'apy', 'tokens', 'freshness'])
        expect(await page.locator(`section[data-part="${part}"]`).count(), part).toBe(1);
      for (const id of ['chart-tvl', 'chart-volume', 'chart-apy', 'chart-tokens']) {
        const marks = await page.locator(`#${id} svg path`).count();
        expect(marks, id).toBeGreaterThan(5);
      }
      // Each pool's TVL line is drawn.
      const pools = await page.locator('table.top-pools tbody tr').count();
      expect(pools).toBe(10);
      for (let i = 0; i < pools; i++)
        expect(await page.locator(`#spark-${i} svg path`).count(), `spark-${i}`).toBeGreaterThanOrEqual(1);
      // Markup in names is text: no element came out of it, and its characters are on the page as written.
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.locator('script').count()).toBe(3);
      // The BIG symbol holds NUL, C1 and DEL bytes (DUST: terminal escapes and a right-to-left override): shown as
      // escapes, in the table and in the labels of the charts.
      expect(await page.locator('section[data-part="top-pools"]').innerText()).toContain(
        'NUL\\u0000C1\\u0085\\u009b31mDEL\\u007f',
      );
      expect(await page.locator('#chart-tokens svg').innerHTML()).not.toMatch(/[\u0000-\u001f\u202e]/);
      await page.screenshot({ path: join(SHOTS, 'dashboard.png'), fullPage: true });
    } finally {
      await page.close();
    }
  });

  it('shows the numbers of the reports: the top pool, and one day of volume', async () => {
    const file = join(dir, 'dashboard-bsc.html');
    const made = await cli(['dashboard', '--out', file, '--chain', 'bsc'], env);
    expect(made.code, made.stderr).toBe(0);
    const { page, errors } = await openPage(browser, file);
    try {
      // The top pool of bsc: the row's tracked and service TVL are the report's, as people read them.
      const top = (await report(['report', 'top_pools', '--chain', 'bsc'])).sort(
        (a, b) => Number(b.tvl_usd ?? -Infinity) - Number(a.tvl_usd ?? -Infinity),
      )[0]!;
      const row = page.locator('table.top-pools tbody tr').first();
      expect(await row.getAttribute('data-pool')).toBe(top.pool);
      const cells = await row.locator('td').allInnerTexts();
      expect(cells[5]).toBe(usd(top.tvl_usd === null ? null : Number(top.tvl_usd)));
      expect(cells[6]).toBe(usd(top.tvl_service_usd === null ? null : Number(top.tvl_service_usd)));
      // APYs above 10 (1,000% a year) or below 0 are marked in the table and left out of the chart's bars, so that
      // they set no scale: every bar is within the rule, and the service APYs the report flags are marked.
      const bars = (await page.evaluate(
        'window.poolExportCharts["chart-apy"].getOption().series.map((s) => s.data)',
      )) as (number | null)[][];
      for (const v of bars.flat()) if (v !== null) expect(v >= 0 && v <= 10, String(v)).toBe(true);
      const shown = await page
        .locator('table.top-pools tbody tr')
        .evaluateAll((trs) =>
          trs.map((tr) => [
            tr.getAttribute('data-pool'),
            tr.querySelectorAll('td')[8]!.querySelector('.implausible') !== null,
          ]),
        );
      const pools = await report(['report', 'top_pools', '--chain', 'bsc']);
      for (const [pool, marked] of shown) {
        const apy = pools.find((r) => r.pool === pool)?.transaction_base_apy;
        expect(marked, `${pool} ${apy}`).toBe(
          apy !== null && apy !== undefined && (Number(apy) > 10 || Number(apy) < 0),
        );
      }
      // The last day of the volume chart: its tooltip shows the sum of that day's volume_daily rows.
      const days = (await page.evaluate(
        'window.poolExportCharts["chart-volume"].getOption().xAxis[0].data',
      )) as string[];
      const day = days.at(-2)!;
      const rows = await report(['report', 'volume_daily', '--chain', 'bsc', '--from', day, '--to', day]);
      const sum = rows.reduce((a, r) => a + Number(r.volume_usd ?? 0), 0);
      await page.evaluate(
        `window.poolExportCharts["chart-volume"].dispatchAction({ type: 'showTip', seriesIndex: 0, dataIndex: ${days.length - 2} })`,
      );
      const tip = page.locator('#chart-volume div').filter({ hasText: day }).last();
      await expect.poll(() => tip.innerText()).toContain(`bsc: ${usd(sum)}`);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('an empty lake gives a page that says so and names the command, with no error', async () => {
    const file = join(dir, 'empty.html');
    const made = await cli(['dashboard', '--out', file], { ...env, POOL_EXPORT_DATA_DIR: join(dir, 'nothing') });
    expect(made.code, made.stderr).toBe(0);
    const { page, errors, requests } = await openPage(browser, file);
    try {
      expect(errors).toEqual([]);
      expect(requests).toEqual([`file://${file}`]);
      const text = await page.locator('body').innerText();
      expect(text).toContain('No data yet');
      expect(text).toContain('pool-export run');
    } finally {
      await page.close();
    }
  });
});

describe.skipIf(CHROMIUM)('the browser tier', () => {
  it('is skipped: no Chromium on this machine (Debian: apt-get install chromium; or set CHROMIUM_PATH)', () => {
    expect(CHROMIUM).toBeUndefined();
  });
});
