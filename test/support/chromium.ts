/**
 * The browser of the browser tier: Debian's `chromium` (installed by `.ci/run`, as the Docker engine is), or the one
 * `CHROMIUM_PATH` names. Nothing downloads a browser.
 */
import { existsSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';

/** The Chromium binary to drive, or undefined when this machine has none. */
export function chromiumPath(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((p): p is string => !!p && existsSync(p));
}

/** Opens a page file, recording console errors, dialogs and every request it makes. */
export async function openPage(
  browser: Browser,
  file: string,
): Promise<{ page: Page; errors: string[]; requests: string[]; dialogs: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  const requests: string[] = [];
  const dialogs: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => requests.push(r.url()));
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(`file://${file}`);
  await page.waitForSelector('body[data-rendered]');
  return { page, errors, requests, dialogs };
}
