/**
 * Starts a worker thread of the project's own code: the bundle's script beside the command line's (`dist/bin/<name>.js`,
 * `scripts/build.mjs` builds each), or, running from the sources, the TypeScript through tsx, registered in the worker
 * first (a worker takes no `--import` of its own).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** The worker of `script` (the caller's `new URL('./x.js', import.meta.url)`), or of `source` (its `.ts`). */
export function startWorker(at: { readonly script: URL; readonly source: URL }, options: WorkerOptions = {}): Worker {
  if (existsSync(at.script)) return new Worker(at.script, options);
  const pkg = createRequire(import.meta.url).resolve('tsx/package.json');
  const exports = (
    JSON.parse(readFileSync(pkg, 'utf8')) as { exports: Record<string, { import: { default: string } }> }
  ).exports;
  const api = new URL(exports['./esm/api']!.import.default, pathToFileURL(pkg)).href;
  const code = `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(at.source.href)}); })`;
  return new Worker(code, { ...options, eval: true });
}
