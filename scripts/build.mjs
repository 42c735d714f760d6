// Compiles the command line into one ES module, dist/bin/pool-export.js, and the page worker it starts into
// dist/bin/page-worker.js (esbuild; the npm packages stay external).
// `npm ci` runs it (the `prepare` step), and so does `make` when a source is newer than the bundle. The bundle sits two
// folders below the root, like the sources, so that the paths they read relative to themselves (sql/, src/schemas/)
// resolve the same from either.
import { build } from 'esbuild';

await build({
  entryPoints: { 'pool-export': 'bin/main.ts', 'page-worker': 'src/export/page-worker.ts' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  outdir: 'dist/bin',
  logLevel: 'warning',
});
