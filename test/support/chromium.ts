/**
 * The browser of the browser tier: Debian's `chromium` (installed by `.ci/run`, as the Docker engine is), or the one
 * `CHROMIUM_PATH` names. Nothing downloads a browser.
 */
import { existsSync } from 'node:fs';

/** The Chromium binary to drive, or undefined when this machine has none. */
export function chromiumPath(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((p): p is string => !!p && existsSync(p));
}
