/**
 * One owner for the data folder (`src/config/data-folder.ts`): no other source names a file or folder in it, nor
 * builds a path inside it from the folder itself. Read from the sources as text, like the layering (layers.test.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATA_FOLDER_NAMES, dataFolder } from '../../src/config/data-folder.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');
const OWNER = 'src/config/data-folder.ts';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The project's sources but the owner's and the sandbox's (a server of its own, with no data folder), as code. */
function code(): { file: string; text: string }[] {
  return sources(SRC)
    .map((f) => ({ file: relative(ROOT, f), text: readFileSync(f, 'utf8') }))
    .filter((s) => s.file !== OWNER && !s.file.startsWith('src/sandbox/'))
    .map((s) => ({ ...s, text: s.text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '') }));
}

describe('the data folder', () => {
  it('has its names in one module: no other source names a file or folder in it', () => {
    // `lake` and `.tmp` are also words of other things (a config key, the lake's own temporary folder): the rule below
    // covers their paths.
    const names = Object.values(DATA_FOLDER_NAMES).filter((n) => n !== 'lake' && n !== '.tmp');
    expect(names.length).toBeGreaterThan(8);
    const found = code().flatMap(({ file, text }) =>
      names.filter((n) => text.includes(`'${n}'`) || text.includes(`"${n}"`)).map((n) => `${file}: ${n}`),
    );
    expect(found).toEqual([]);
  });

  it('is the only one to build paths inside the folder', () => {
    const found = code().flatMap(({ file, text }) =>
      [...text.matchAll(/\b(?:join|resolve)\(\s*[\w.]*dataDir\b\s*,[^)]*\)/g)].map((m) => `${file}: ${m[0]}`),
    );
    expect(found).toEqual([]);
  });

  it('names each path once, each inside the folder and none twice', () => {
    const folder = dataFolder('/d');
    const paths = Object.getOwnPropertyNames(Object.getPrototypeOf(folder))
      .filter((k) => k !== 'constructor')
      .map((k) => (folder as unknown as Record<string, string>)[k]!);
    expect(paths.length).toBe(Object.keys(DATA_FOLDER_NAMES).length);
    expect(new Set(paths).size).toBe(paths.length);
    for (const p of paths) expect(p.startsWith('/d/')).toBe(true);
    expect(folder.views).not.toBe(`${folder.lake}.duckdb`);
  });
});
