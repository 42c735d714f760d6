// Compiles the command line into ES modules under dist/bin: pool-export.js (what every command needs: the command
// table and yargs), one chunk per command and the code they share, loaded when a command is named, and the workers
// it starts: page-worker.js (pages checked beside the run) and parse-worker.js (manifests and schemas read within
// bounds) (esbuild).
// `make` runs it when a source is newer than the bundle, and `npm pack` (the `prepack` step) before it packs. The bundle sits two
// folders below the root, like the sources, so that the paths they read relative to themselves (sql/, src/schemas/,
// package.json) resolve the same from either.
//
// The npm packages written in JavaScript are bundled too: Node resolves and reads every file of a package it imports,
// and yargs, graphql and pino are hundreds of files, which took about 0.1 s of each start (`status` on an empty folder:
// 0.42 s with them external, 0.29 s bundled). Left external: @duckdb/node-api (a native addon, loaded only by the
// commands that open a database), apache-arrow (large, imported only for `--format arrow`) and echarts (the dashboard
// reads its file).
import { readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

// What every bundle of the project shares (the benchmark compiles bench/store-alone.ts with it too): ES modules for
// Node 20, npm packages bundled, and a `require` for the packages published as CommonJS, which an ES module lacks.
const common = JSON.parse(readFileSync(new URL('./bundle-options.json', import.meta.url), 'utf8'));

// Chunk names carry a hash of their content: old ones would pile up.
rmSync('dist/bin', { recursive: true, force: true });
await build({
  ...common,
  entryPoints: {
    'pool-export': 'bin/main.ts',
    'page-worker': 'src/export/check/page-worker.ts',
    'parse-worker': 'src/upstream/parse-worker.ts',
  },
  splitting: true,
  external: ['@duckdb/node-api', 'apache-arrow', 'echarts'],
  outdir: 'dist/bin',
});
