/**
 * The lock file names the optional packages of every platform (the native builds of DuckDB, esbuild, rollup, biome):
 * `npm ci` refuses a lock file that leaves them out (npm/cli#8805), which an `npm install` on a machine whose registry
 * answers only for its own platform can write.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface LockPackage {
  version?: string;
  integrity?: string;
  optionalDependencies?: Record<string, string>;
}

const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, LockPackage>;
};

/** Where npm looks for a dependency of the package at `path`: its own node_modules, then each folder above. */
function resolve(path: string, name: string): LockPackage | undefined {
  let at = path;
  for (;;) {
    const found = lock.packages[`${at ? `${at}/` : ''}node_modules/${name}`];
    if (found) return found;
    if (!at) return undefined;
    const i = at.lastIndexOf('/node_modules/');
    at = i < 0 ? '' : at.slice(0, i);
  }
}

describe('the lock file', () => {
  it('has an entry, with version and integrity, for every optional dependency of every package', () => {
    const missing: string[] = [];
    let checked = 0;
    for (const [path, pkg] of Object.entries(lock.packages))
      for (const name of Object.keys(pkg.optionalDependencies ?? {})) {
        checked++;
        const entry = resolve(path, name);
        if (!entry?.version || !entry.integrity) missing.push(`${name} (of ${path || 'the project'})`);
      }
    // The native builds alone are dozens: a lock file with none would make this check empty.
    expect(checked).toBeGreaterThan(40);
    expect(missing).toEqual([]);
  });
});
