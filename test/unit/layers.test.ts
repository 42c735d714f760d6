/**
 * The layering of `src/`, as the Layout section of docs/development.md states it: a folder imports only from the folders after it
 * in LAYERS, `src/errors.ts` imports nothing of the project, and nothing under `src/` imports `jobs/` (the entry point
 * hands the jobs in). The imports are read from the sources as text.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');
/** From the top down. */
const LAYERS = [
  'cli',
  // The scheduled service wired in one place: scheduler, head watch, metrics endpoint, dashboard renewal, signals.
  'service',
  // Prometheus metrics of runs, the status file and the upstream's heads; the endpoint and the textfile.
  'metrics',
  // The recipe of a run: lock, warehouse, extract, lake, views. The stages below it know nothing of each other's
  // places in it: `export/` (extract) imports neither `lake/` nor `reports/`.
  'pipeline',
  // Completeness against the upstream's counters, and repairs: reads the warehouse and the lake, re-reads through export.
  'verify',
  'reports',
  // The lake on a bucket: publishing the data folder's lake, fetching it back, restoring the warehouse from it.
  'bucket',
  'lake',
  'export',
  'scheduler',
  'store',
  'upstream',
  'sandbox',
  'config',
  'catalog',
  'schemas',
  'util',
  'errors',
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The layer of a path under the repository: `cli`, `errors`…, or `outside` (`jobs/`, `test/`). */
function layerOf(path: string): string {
  const rel = relative(SRC, path);
  if (rel.startsWith('..')) return `outside:${relative(ROOT, path).split('/')[0]}`;
  return rel.split('/')[0]!.replace(/\.ts$/, '');
}

/** Every relative import of the project's sources: from which layer to which. */
function imports(): { file: string; from: string; to: string }[] {
  return sources(SRC).flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)].map((m) => ({
      file: relative(ROOT, file),
      from: layerOf(file),
      to: layerOf(resolve(dirname(file), m[1]!)),
    }));
  });
}

describe('layers of src/', () => {
  const all = imports();

  it('reads the imports it checks (the check is not vacuous)', () => {
    expect(all.length).toBeGreaterThan(200);
    // Every folder of src/ has its place in LAYERS (a new folder must be given one).
    expect(new Set(sources(SRC).map(layerOf))).toEqual(new Set(LAYERS));
  });

  it('every folder imports only from the folders below it, and none from jobs/ or test/', () => {
    const up = all.filter((i) => i.from !== i.to && !(LAYERS.indexOf(i.to) > LAYERS.indexOf(i.from)));
    expect(up.map((i) => `${i.file} (${i.from}) imports ${i.to}`)).toEqual([]);
  });

  it('the errors module imports nothing of the project', () => {
    expect(all.filter((i) => i.from === 'errors')).toEqual([]);
  });

  it('the extract stage imports neither the lake nor the reports (only the pipeline above them does)', () => {
    const crossing = all.filter((i) => i.from === 'export' && (i.to === 'lake' || i.to === 'reports'));
    expect(crossing.map((i) => `${i.file} imports ${i.to}`)).toEqual([]);
  });
});
