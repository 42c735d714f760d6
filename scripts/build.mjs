// Compiles the command line into ES modules under dist/bin: pool-export.js (what every command needs: the command
// table and yargs), one chunk per command and the code they share, loaded when a command is named, and the page
// worker it starts, page-worker.js (esbuild; the npm packages stay external).
// `npm ci` runs it (the `prepare` step), and so does `make` when a source is newer than the bundle. The bundle sits two
// folders below the root, like the sources, so that the paths they read relative to themselves (sql/, src/schemas/)
// resolve the same from either.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

// Chunk names carry a hash of their content: old ones would pile up.
rmSync('dist/bin', { recursive: true, force: true });
await build({
  entryPoints: { 'pool-export': 'bin/main.ts', 'page-worker': 'src/export/page-worker.ts' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  splitting: true,
  outdir: 'dist/bin',
  logLevel: 'warning',
});
