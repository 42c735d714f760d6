/**
 * The README as a front page and the guide under `docs/`: the README stays short and links every page of the guide,
 * and every link between them, or to a file of the project, leads somewhere: the file exists, and so does the heading
 * an anchor names (GitHub's slugs: lower case, punctuation dropped, spaces as hyphens).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const PAGES = readdirSync(join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);
const FILES = ['README.md', ...PAGES];

/** The text outside fenced code blocks. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '');

/** GitHub's anchor of a heading. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replaceAll(' ', '-');

const anchors = (file: string) =>
  new Set([...prose(readFileSync(join(ROOT, file), 'utf8')).matchAll(/^#{1,6} (.*)$/gm)].map((m) => slug(m[1]!)));

describe('the README and the guide', () => {
  it('the README is a front page: at most 400 lines, linking every page of the guide (at least 3)', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(400);
    expect(PAGES.length).toBeGreaterThanOrEqual(3);
    const linked = new Set([...readme.matchAll(/\]\((docs\/[\w-]+\.md)\)/g)].map((m) => m[1]!));
    expect([...linked].sort()).toEqual([...PAGES].sort());
  });

  it('every relative link leads to a file of the project, and every anchor to a heading there', () => {
    const broken: string[] = [];
    for (const file of FILES) {
      const text = prose(readFileSync(join(ROOT, file), 'utf8'));
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = m[1]!;
        if (/^[a-z]+:/.test(link)) continue;
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path ? relative(ROOT, resolve(dirname(join(ROOT, file)), path)) : file;
        if (!existsSync(join(ROOT, target))) broken.push(`${file}: ${link} (no ${target})`);
        else if (anchor && target.endsWith('.md') && !anchors(target).has(anchor))
          broken.push(`${file}: ${link} (no heading #${anchor} in ${target})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
