// Takes the README's picture of a dashboard page: `node scripts/dashboard-screenshot.mjs PAGE.html OUT.png`.
// Uses the machine's Chromium (scripts/chromium.sh installs Debian's), at half scale so that the PNG stays small.
import { chromium } from 'playwright-core';

const [page, out] = process.argv.slice(2);
if (!page || !out) throw new Error('usage: node scripts/dashboard-screenshot.mjs PAGE.html OUT.png');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' });
try {
  const p = await browser.newPage({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 0.5 });
  await p.goto(`file://${new URL(page, `file://${process.cwd()}/`).pathname}`);
  await p.waitForSelector('body[data-rendered]');
  await p.screenshot({ path: out, fullPage: true });
} finally {
  await browser.close();
}
