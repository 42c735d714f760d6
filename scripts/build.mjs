// Compiles the command line into one ES module, dist/bin/pool-export.js (esbuild; the npm packages stay external).
// `npm ci` runs it (the `prepare` step), and so does `make` when a source is newer than the bundle. The bundle sits two
// folders below the root, like the sources, so that the paths they read relative to themselves (sql/, src/schemas/)
// resolve the same from either.
import { build } from 'esbuild';

await build({
  entryPoints: ['bin/main.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  outfile: 'dist/bin/pool-export.js',
  logLevel: 'warning',
});
